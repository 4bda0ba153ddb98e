"""The daemon: APScheduler wiring (scheduler), the jobs it runs (jobs), triggers (cron as crontab means it),
the serve loop and clean stop (service), and its log format (log)."""
