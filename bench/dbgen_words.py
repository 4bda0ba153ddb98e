"""Word pools of the generated databases (bench/dbgen.py): domains, table nouns, column names, values.

None of these nouns is one of the demo's or the test fixtures' (companies, contacts, deals, activities,
customers, orders, invoices, books, users, accounts): a report about a generated database cannot lean on
words that were tuned for ours.
"""

from __future__ import annotations

#: domain -> (parents, children); each noun is (singular, table name). A child table references a parent.
DOMAINS: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]] = {
    "clinic": ([("patient", "patients"), ("clinician", "clinicians")],
               [("visit", "visits"), ("prescription", "prescriptions"), ("lab_result", "lab_results")]),
    "logistics": ([("courier", "couriers"), ("depot", "depots")],
                  [("shipment", "shipments"), ("parcel", "parcels"), ("pickup", "pickups")]),
    "iot": ([("sensor", "sensors"), ("gateway", "gateways")],
            [("reading", "sensor_readings"), ("alert", "alerts"), ("heartbeat", "heartbeats")]),
    "events": ([("venue", "venues"), ("organiser", "organisers")],
               [("reservation", "reservations"), ("ticket", "tickets"), ("checkin", "checkins")]),
    "membership": ([("member", "members"), ("donor", "donors"), ("subscriber", "subscribers")],
                   [("pledge", "pledges"), ("renewal", "renewals"), ("donation", "donations")]),
    "shop": ([("vendor", "vendors"), ("merchant", "merchants")],
             [("purchase", "purchases"), ("refund", "refunds"), ("basket", "baskets")]),
    "housing": ([("tenant", "tenants"), ("landlord", "landlords")],
                [("lease", "leases"), ("repair_request", "repair_requests"), ("rent_payment", "rent_payments")]),
    "school": ([("pupil", "pupils"), ("tutor", "tutors")],
               [("enrolment", "enrolments"), ("grade_entry", "grade_entries"), ("absence", "absences")]),
}

#: low-cardinality columns a defect can concentrate in: name -> possible values
SEGMENTS: dict[str, list[str]] = {
    "source": ["web_form", "mobile_app", "csv_import", "partner_api", "kiosk", "call_centre"],
    "region": ["north", "south", "east", "west", "central", "coastal"],
    "channel": ["online", "in_store", "phone", "referral", "marketplace"],
    "site": ["berlin", "lyon", "porto", "oslo", "riga", "turin"],
    "carrier": ["fastline", "parcelnet", "swiftway", "northpost"],
    "plan": ["basic", "plus", "premium", "trial"],
    "firmware": ["v1_2", "v1_3", "v2_0", "v2_1", "v3_0"],
    "origin_system": ["legacy_erp", "new_erp", "manual_entry", "bulk_upload"],
    "device_type": ["android", "ios", "desktop", "tablet"],
    "intake_team": ["team_red", "team_blue", "team_green", "night_shift"],
}

TIMESTAMPS = ["created_at", "registered_at", "recorded_at", "logged_at", "scheduled_at", "opened_at", "entered_at"]

#: columns the checks look at, by kind
EMAILS = ["email", "primary_email", "notify_email", "billing_email", "reply_email"]
CODES: dict[str, list[str]] = {
    "status": ["active", "paused", "closed"],
    "state": ["open", "pending", "resolved", "archived"],
    "stage": ["new", "triaged", "scheduled", "done"],
    "priority": ["low", "normal", "high", "urgent"],
    "tier_code": ["bronze", "silver", "gold"],
}
MEASURES: dict[str, tuple[float, float]] = {
    "amount": (0, 5000), "weight_kg": (0, 70), "temperature_c": (-40, 60), "dose_mg": (0, 800),
    "duration_min": (0, 600), "score": (0, 100), "quantity": (1, 250), "distance_km": (0, 2000),
}
TEXTS = ["full_name", "label", "reference_code", "postcode", "phone", "title", "display_name"]

SYLLABLES = ["ka", "lo", "mi", "ren", "ta", "vo", "sel", "dun", "pra", "gi", "mor", "esh", "ul", "bri"]
MAIL_DOMAINS = ["mailbox.test", "post.example", "inbox.example", "relay.test"]
#: values an ETL writes into a malformed e-mail column
BAD_EMAILS = ["n/a", "none", "-", "unknown"]
#: sentinels an ETL writes into a number column
SENTINELS = [-1, -999, 9999, 99999]
