-- BigQuery (bigquery): generated SQL only, not tested against a live server.
-- The statements a scan of suite.yaml sends; regenerate with: .venv/bin/pytest tests/test_warehouse_dialects.py --update-golden

-- aggregate pass over sales.orders
SELECT COUNT(*) AS m0, SUM(CASE WHEN `email` IS NULL THEN 1 ELSE 0 END) AS m1, SUM(CASE WHEN NOT `email` IS NULL AND NOT (REGEXP_CONTAINS(CAST(`email` AS STRING), '(?s)^[^\\x09-\\x0d @]+@[^\\x09-\\x0d @]+\\.[a-z]{2,}\\z')) THEN 1 ELSE 0 END) AS m2, SUM(CASE WHEN NOT `sku` IS NULL AND NOT (REGEXP_CONTAINS(CAST(`sku` AS STRING), '(?s)^[A-Za-z]{2}\\-[0-9]{3,}\\z')) THEN 1 ELSE 0 END) AS m3, SUM(CASE WHEN NOT `notes` IS NULL AND (REGEXP_CONTAINS(CAST(`notes` AS STRING), '(?s)TODO|FIXME')) THEN 1 ELSE 0 END) AS m4, SUM(CASE WHEN NOT `status` IS NULL AND NOT COLLATE(`status`, 'binary') IN ('open', 'shipped', 'on hold', 'draft') THEN 1 ELSE 0 END) AS m5, SUM(CASE WHEN NOT `priority` IS NULL AND NOT `priority` IN (1, 2, 3) THEN 1 ELSE 0 END) AS m6, SUM(CASE WHEN NOT `ship_date` IS NULL AND NOT `ship_date` IN ('2024-01-01', '2024-12-31') THEN 1 ELSE 0 END) AS m7, SUM(CASE WHEN NOT `amount` IS NULL AND (`amount` < 0 OR `amount` > 10000) THEN 1 ELSE 0 END) AS m8, SUM(CASE WHEN NOT `ship_date` IS NULL AND (`ship_date` < '2020-01-01' OR `ship_date` > '2030-12-31') THEN 1 ELSE 0 END) AS m9, MAX(`created_at`) AS m10, SUM(CASE WHEN NOT (amount >= discount) THEN 1 ELSE 0 END) AS m11, SUM(CASE WHEN CASE WHEN ship_date >= order_date THEN 0 ELSE 1 END = 1 THEN 1 ELSE 0 END) AS m12 FROM `sales`.`orders`;

-- aggregate pass over sales.orders where status <> 'draft'
SELECT COUNT(*) AS m0, SUM(CASE WHEN `customer_id` IS NULL THEN 1 ELSE 0 END) AS m1 FROM `sales`.`orders` WHERE status <> 'draft';

-- aggregate pass over sales.customers
SELECT COUNT(*) AS m0, SUM(CASE WHEN `id` IS NULL THEN 1 ELSE 0 END) AS m1 FROM `sales`.`customers`;

-- own statement with up to 5 sample rows: sales.orders.order_no.unique
SELECT COUNT(*) OVER () AS duplicate_values, SUM(n) OVER () AS failing_rows, k0, n FROM (SELECT `order_no` AS k0, COUNT(*) AS n FROM `sales`.`orders` WHERE NOT `order_no` IS NULL GROUP BY `order_no` HAVING COUNT(*) > 1) AS dup_groups ORDER BY k0 LIMIT 5;

-- own statement with up to 5 sample rows: sales.orders.first_name+last_name.unique
SELECT COUNT(*) OVER () AS duplicate_values, SUM(n) OVER () AS failing_rows, k0, k1, n FROM (SELECT COLLATE(`first_name`, 'binary') AS k0, COLLATE(`last_name`, 'binary') AS k1, COUNT(*) AS n FROM `sales`.`orders` WHERE NOT (`first_name` IS NULL AND `last_name` IS NULL) GROUP BY COLLATE(`first_name`, 'binary'), COLLATE(`last_name`, 'binary') HAVING COUNT(*) > 1) AS dup_groups ORDER BY k0, k1 LIMIT 5;

-- own statement with up to 5 sample rows: sales.orders.customer_id.foreign_key
SELECT COUNT(*) OVER () AS wd_orphans, `wd_child`.* FROM `sales`.`orders` AS `wd_child` WHERE NOT `wd_child`.`customer_id` IS NULL AND NOT EXISTS(SELECT 1 FROM `sales`.`customers` AS `wd_parent` WHERE `wd_parent`.`id` = `wd_child`.`customer_id`) LIMIT 5;

-- own statement with up to 5 sample rows: sales.orders.email.foreign_key
SELECT COUNT(*) OVER () AS wd_orphans, `wd_child`.* FROM `sales`.`orders` AS `wd_child` WHERE NOT `wd_child`.`email` IS NULL AND NOT EXISTS(SELECT 1 FROM `sales`.`customers` AS `wd_parent` WHERE COLLATE(`wd_parent`.`email`, 'binary') = COLLATE(`wd_child`.`email`, 'binary')) LIMIT 5;

-- own statement: sales.orders.zip->city.functional_dependency
SELECT SUM(CASE WHEN wd_n = wd_top AND wd_winners = 1 THEN 0 ELSE wd_n END) AS failing_rows, SUM(CASE WHEN wd_rank = 1 THEN 1 ELSE 0 END) AS groups_in_conflict, SUM(wd_n) AS rows_in_conflict, SUM(CASE WHEN wd_rank = 1 AND wd_winners > 1 THEN 1 ELSE 0 END) AS tied_groups FROM (SELECT wd_k0, wd_v, wd_shown, wd_n, wd_top, SUM(CASE WHEN wd_n = wd_top THEN 1 ELSE 0 END) OVER (PARTITION BY wd_k0) AS wd_winners, ROW_NUMBER() OVER (PARTITION BY wd_k0 ORDER BY wd_n DESC) AS wd_rank FROM (SELECT COLLATE(`zip`, 'binary') AS wd_k0, COLLATE(`city`, 'binary') AS wd_v, MIN(`city`) AS wd_shown, COUNT(*) AS wd_n, MAX(COUNT(*)) OVER (PARTITION BY COLLATE(`zip`, 'binary')) AS wd_top, COUNT(*) OVER (PARTITION BY COLLATE(`zip`, 'binary')) AS wd_values FROM `sales`.`orders` WHERE NOT `zip` IS NULL AND NOT `city` IS NULL GROUP BY COLLATE(`zip`, 'binary'), COLLATE(`city`, 'binary')) AS wd_pairs WHERE wd_values > 1) AS wd_ranked;

-- own statement with up to 5 sample rows: sales.customers.email.unique
SELECT COUNT(*) OVER () AS duplicate_values, SUM(n) OVER () AS failing_rows, k0, n FROM (SELECT COLLATE(`email`, 'binary') AS k0, COUNT(*) AS n FROM `sales`.`customers` WHERE NOT `email` IS NULL GROUP BY COLLATE(`email`, 'binary') HAVING COUNT(*) > 1) AS dup_groups ORDER BY k0 LIMIT 5;

-- own statement: negative_totals
SELECT COUNT(*) FROM sales.orders WHERE amount < 0;

-- own statement: orders_without_lines
SELECT COUNT(*) FROM (SELECT o.order_no FROM sales.orders AS o LEFT JOIN sales.lines AS l ON l.order_no = o.order_no WHERE l.order_no IS NULL) AS wd_failing;

-- own statement (no samples wanted): sales.orders.order_no.unique
SELECT COUNT(*) AS duplicate_values, SUM(n) AS failing_rows FROM (SELECT COUNT(*) AS n FROM `sales`.`orders` WHERE NOT `order_no` IS NULL GROUP BY `order_no` HAVING COUNT(*) > 1) AS dup_groups;

-- own statement (no samples wanted): sales.orders.first_name+last_name.unique
SELECT COUNT(*) AS duplicate_values, SUM(n) AS failing_rows FROM (SELECT COUNT(*) AS n FROM `sales`.`orders` WHERE NOT (`first_name` IS NULL AND `last_name` IS NULL) GROUP BY COLLATE(`first_name`, 'binary'), COLLATE(`last_name`, 'binary') HAVING COUNT(*) > 1) AS dup_groups;

-- own statement (no samples wanted): sales.orders.customer_id.foreign_key
SELECT COUNT(*) FROM `sales`.`orders` AS `wd_child` WHERE NOT `wd_child`.`customer_id` IS NULL AND NOT EXISTS(SELECT 1 FROM `sales`.`customers` AS `wd_parent` WHERE `wd_parent`.`id` = `wd_child`.`customer_id`);

-- own statement (no samples wanted): sales.orders.email.foreign_key
SELECT COUNT(*) FROM `sales`.`orders` AS `wd_child` WHERE NOT `wd_child`.`email` IS NULL AND NOT EXISTS(SELECT 1 FROM `sales`.`customers` AS `wd_parent` WHERE COLLATE(`wd_parent`.`email`, 'binary') = COLLATE(`wd_child`.`email`, 'binary'));

-- own statement (no samples wanted): sales.customers.email.unique
SELECT COUNT(*) AS duplicate_values, SUM(n) AS failing_rows FROM (SELECT COUNT(*) AS n FROM `sales`.`customers` WHERE NOT `email` IS NULL GROUP BY COLLATE(`email`, 'binary') HAVING COUNT(*) > 1) AS dup_groups;

-- finding sql: sales.orders.email.not_null
SELECT * FROM `sales`.`orders` WHERE `email` IS NULL;

-- finding sql: sales.orders.customer_id.not_null
SELECT * FROM `sales`.`orders` WHERE `customer_id` IS NULL AND status <> 'draft';

-- finding sql: sales.orders.order_no.unique
SELECT * FROM (SELECT `src`.*, COUNT(*) OVER (PARTITION BY `order_no`) AS wd_group_rows FROM `sales`.`orders` AS `src` WHERE NOT `order_no` IS NULL) AS grouped WHERE wd_group_rows > 1 ORDER BY `order_no`;

-- finding sql: sales.orders.first_name+last_name.unique
SELECT * FROM (SELECT `src`.*, COUNT(*) OVER (PARTITION BY COLLATE(`first_name`, 'binary'), COLLATE(`last_name`, 'binary')) AS wd_group_rows FROM `sales`.`orders` AS `src` WHERE NOT (`first_name` IS NULL AND `last_name` IS NULL)) AS grouped WHERE wd_group_rows > 1 ORDER BY `first_name`, `last_name`;

-- finding sql: sales.orders.email.pattern
SELECT * FROM `sales`.`orders` WHERE NOT `email` IS NULL AND NOT (REGEXP_CONTAINS(CAST(`email` AS STRING), '(?s)^[^\\x09-\\x0d @]+@[^\\x09-\\x0d @]+\\.[a-z]{2,}\\z'));

-- finding sql: sales.orders.sku.pattern
SELECT * FROM `sales`.`orders` WHERE NOT `sku` IS NULL AND NOT (REGEXP_CONTAINS(CAST(`sku` AS STRING), '(?s)^[A-Za-z]{2}\\-[0-9]{3,}\\z'));

-- finding sql: sales.orders.notes.pattern
SELECT * FROM `sales`.`orders` WHERE NOT `notes` IS NULL AND (REGEXP_CONTAINS(CAST(`notes` AS STRING), '(?s)TODO|FIXME'));

-- finding sql: sales.orders.status.accepted_values
SELECT * FROM `sales`.`orders` WHERE NOT `status` IS NULL AND NOT COLLATE(`status`, 'binary') IN ('open', 'shipped', 'on hold', 'draft');

-- finding sql: sales.orders.priority.accepted_values
SELECT * FROM `sales`.`orders` WHERE NOT `priority` IS NULL AND NOT `priority` IN (1, 2, 3);

-- finding sql: sales.orders.ship_date.accepted_values
SELECT * FROM `sales`.`orders` WHERE NOT `ship_date` IS NULL AND NOT `ship_date` IN ('2024-01-01', '2024-12-31');

-- finding sql: sales.orders.amount.range
SELECT * FROM `sales`.`orders` WHERE NOT `amount` IS NULL AND (`amount` < 0 OR `amount` > 10000);

-- finding sql: sales.orders.ship_date.range
SELECT * FROM `sales`.`orders` WHERE NOT `ship_date` IS NULL AND (`ship_date` < '2020-01-01' OR `ship_date` > '2030-12-31');

-- finding sql: sales.orders.customer_id.foreign_key
SELECT `wd_child`.* FROM `sales`.`orders` AS `wd_child` WHERE NOT `wd_child`.`customer_id` IS NULL AND NOT EXISTS(SELECT 1 FROM `sales`.`customers` AS `wd_parent` WHERE `wd_parent`.`id` = `wd_child`.`customer_id`);

-- finding sql: sales.orders.email.foreign_key
SELECT `wd_child`.* FROM `sales`.`orders` AS `wd_child` WHERE NOT `wd_child`.`email` IS NULL AND NOT EXISTS(SELECT 1 FROM `sales`.`customers` AS `wd_parent` WHERE COLLATE(`wd_parent`.`email`, 'binary') = COLLATE(`wd_child`.`email`, 'binary'));

-- finding sql: sales.orders.created_at.freshness
SELECT MAX(`created_at`) AS newest FROM `sales`.`orders`;

-- finding sql: sales.orders.row_count
SELECT COUNT(*) FROM `sales`.`orders`;

-- finding sql: sales.orders.zip->city.functional_dependency
SELECT `src`.*, `m`.`wd_majority` AS wd_majority_value FROM `sales`.`orders` AS `src` JOIN (SELECT wd_k0, MAX(CASE WHEN wd_n = wd_top AND wd_winners = 1 THEN wd_shown END) AS wd_majority, MAX(CASE WHEN wd_n = wd_top AND wd_winners = 1 THEN wd_v END) AS wd_majority_key, MAX(CASE WHEN wd_n = wd_top AND wd_winners = 1 THEN 1 ELSE 0 END) AS wd_decided FROM (SELECT wd_k0, wd_v, wd_shown, wd_n, wd_top, SUM(CASE WHEN wd_n = wd_top THEN 1 ELSE 0 END) OVER (PARTITION BY wd_k0) AS wd_winners, ROW_NUMBER() OVER (PARTITION BY wd_k0 ORDER BY wd_n DESC) AS wd_rank FROM (SELECT COLLATE(`zip`, 'binary') AS wd_k0, COLLATE(`city`, 'binary') AS wd_v, MIN(`city`) AS wd_shown, COUNT(*) AS wd_n, MAX(COUNT(*)) OVER (PARTITION BY COLLATE(`zip`, 'binary')) AS wd_top, COUNT(*) OVER (PARTITION BY COLLATE(`zip`, 'binary')) AS wd_values FROM `sales`.`orders` WHERE NOT `zip` IS NULL AND NOT `city` IS NULL GROUP BY COLLATE(`zip`, 'binary'), COLLATE(`city`, 'binary')) AS wd_pairs WHERE wd_values > 1) AS wd_ranked GROUP BY wd_k0) AS m ON COLLATE(`src`.`zip`, 'binary') = `m`.`wd_k0` WHERE (NOT `src`.`zip` IS NULL AND NOT `src`.`city` IS NULL) AND (`m`.`wd_decided` = 0 OR NOT (COLLATE(`src`.`city`, 'binary') IS NOT DISTINCT FROM `m`.`wd_majority_key`)) ORDER BY `src`.`zip`, `src`.`city`;

-- finding sql: sales.orders.expression(amount >= discount)
SELECT * FROM `sales`.`orders` WHERE NOT (amount >= discount);

-- finding sql: sales.orders.expression(ship_date >= order_date)
SELECT * FROM `sales`.`orders` WHERE CASE WHEN ship_date >= order_date THEN 0 ELSE 1 END = 1;

-- finding sql: sales.customers.id.not_null
SELECT * FROM `sales`.`customers` WHERE `id` IS NULL;

-- finding sql: sales.customers.email.unique
SELECT * FROM (SELECT `src`.*, COUNT(*) OVER (PARTITION BY COLLATE(`email`, 'binary')) AS wd_group_rows FROM `sales`.`customers` AS `src` WHERE NOT `email` IS NULL) AS grouped WHERE wd_group_rows > 1 ORDER BY `email`;

-- finding sql: negative_totals
SELECT COUNT(*) FROM sales.orders WHERE amount < 0;

-- finding sql: orders_without_lines
SELECT o.order_no FROM sales.orders AS o LEFT JOIN sales.lines AS l ON l.order_no = o.order_no WHERE l.order_no IS NULL;

-- sample pass over sales.orders for: sales.orders.email.not_null, sales.orders.customer_id.not_null, sales.orders.order_no.unique, sales.orders.first_name+last_name.unique, sales.orders.email.pattern, sales.orders.sku.pattern, sales.orders.notes.pattern, sales.orders.status.accepted_values, sales.orders.priority.accepted_values, sales.orders.ship_date.accepted_values, sales.orders.amount.range, sales.orders.ship_date.range, sales.orders.expression(amount >= discount), sales.orders.expression(ship_date >= order_date)
SELECT `src`.*, CASE WHEN `email` IS NULL THEN 1 ELSE 0 END AS wd_sample_0, CASE WHEN `customer_id` IS NULL AND status <> 'draft' THEN 1 ELSE 0 END AS wd_sample_1, CASE WHEN `order_no` = 42 AND NOT `order_no` IS NULL THEN 1 ELSE 0 END AS wd_sample_2, CASE WHEN (COLLATE(`first_name`, 'binary') = 'Lee ' AND COLLATE(`last_name`, 'binary') = 'Lee ') AND NOT (`first_name` IS NULL AND `last_name` IS NULL) THEN 1 ELSE 0 END AS wd_sample_3, CASE WHEN NOT `email` IS NULL AND NOT (REGEXP_CONTAINS(CAST(`email` AS STRING), '(?s)^[^\\x09-\\x0d @]+@[^\\x09-\\x0d @]+\\.[a-z]{2,}\\z')) THEN 1 ELSE 0 END AS wd_sample_4, CASE WHEN NOT `sku` IS NULL AND NOT (REGEXP_CONTAINS(CAST(`sku` AS STRING), '(?s)^[A-Za-z]{2}\\-[0-9]{3,}\\z')) THEN 1 ELSE 0 END AS wd_sample_5, CASE WHEN NOT `notes` IS NULL AND (REGEXP_CONTAINS(CAST(`notes` AS STRING), '(?s)TODO|FIXME')) THEN 1 ELSE 0 END AS wd_sample_6, CASE WHEN NOT `status` IS NULL AND NOT COLLATE(`status`, 'binary') IN ('open', 'shipped', 'on hold', 'draft') THEN 1 ELSE 0 END AS wd_sample_7, CASE WHEN NOT `priority` IS NULL AND NOT `priority` IN (1, 2, 3) THEN 1 ELSE 0 END AS wd_sample_8, CASE WHEN NOT `ship_date` IS NULL AND NOT `ship_date` IN ('2024-01-01', '2024-12-31') THEN 1 ELSE 0 END AS wd_sample_9, CASE WHEN NOT `amount` IS NULL AND (`amount` < 0 OR `amount` > 10000) THEN 1 ELSE 0 END AS wd_sample_10, CASE WHEN NOT `ship_date` IS NULL AND (`ship_date` < '2020-01-01' OR `ship_date` > '2030-12-31') THEN 1 ELSE 0 END AS wd_sample_11, CASE WHEN NOT (amount >= discount) THEN 1 ELSE 0 END AS wd_sample_12, CASE WHEN CASE WHEN ship_date >= order_date THEN 0 ELSE 1 END = 1 THEN 1 ELSE 0 END AS wd_sample_13 FROM `sales`.`orders` AS `src` WHERE (`email` IS NULL) OR (`customer_id` IS NULL AND status <> 'draft') OR (`order_no` = 42 AND NOT `order_no` IS NULL) OR ((COLLATE(`first_name`, 'binary') = 'Lee ' AND COLLATE(`last_name`, 'binary') = 'Lee ') AND NOT (`first_name` IS NULL AND `last_name` IS NULL)) OR (NOT `email` IS NULL AND NOT (REGEXP_CONTAINS(CAST(`email` AS STRING), '(?s)^[^\\x09-\\x0d @]+@[^\\x09-\\x0d @]+\\.[a-z]{2,}\\z'))) OR (NOT `sku` IS NULL AND NOT (REGEXP_CONTAINS(CAST(`sku` AS STRING), '(?s)^[A-Za-z]{2}\\-[0-9]{3,}\\z'))) OR (NOT `notes` IS NULL AND (REGEXP_CONTAINS(CAST(`notes` AS STRING), '(?s)TODO|FIXME'))) OR (NOT `status` IS NULL AND NOT COLLATE(`status`, 'binary') IN ('open', 'shipped', 'on hold', 'draft')) OR (NOT `priority` IS NULL AND NOT `priority` IN (1, 2, 3)) OR (NOT `ship_date` IS NULL AND NOT `ship_date` IN ('2024-01-01', '2024-12-31')) OR (NOT `amount` IS NULL AND (`amount` < 0 OR `amount` > 10000)) OR (NOT `ship_date` IS NULL AND (`ship_date` < '2020-01-01' OR `ship_date` > '2030-12-31')) OR (NOT (amount >= discount)) OR (CASE WHEN ship_date >= order_date THEN 0 ELSE 1 END = 1) LIMIT 40;

-- sample pass over sales.customers for: sales.customers.id.not_null, sales.customers.email.unique
SELECT `src`.*, CASE WHEN `id` IS NULL THEN 1 ELSE 0 END AS wd_sample_0, CASE WHEN COLLATE(`email`, 'binary') = 'Lee ' AND NOT `email` IS NULL THEN 1 ELSE 0 END AS wd_sample_1 FROM `sales`.`customers` AS `src` WHERE (`id` IS NULL) OR (COLLATE(`email`, 'binary') = 'Lee ' AND NOT `email` IS NULL) LIMIT 5;

-- sample query: sales.orders.zip->city.functional_dependency
SELECT `src`.*, `m`.`wd_majority` AS wd_majority_value FROM `sales`.`orders` AS `src` JOIN (SELECT wd_k0, MAX(CASE WHEN wd_n = wd_top AND wd_winners = 1 THEN wd_shown END) AS wd_majority, MAX(CASE WHEN wd_n = wd_top AND wd_winners = 1 THEN wd_v END) AS wd_majority_key, MAX(CASE WHEN wd_n = wd_top AND wd_winners = 1 THEN 1 ELSE 0 END) AS wd_decided FROM (SELECT wd_k0, wd_v, wd_shown, wd_n, wd_top, SUM(CASE WHEN wd_n = wd_top THEN 1 ELSE 0 END) OVER (PARTITION BY wd_k0) AS wd_winners, ROW_NUMBER() OVER (PARTITION BY wd_k0 ORDER BY wd_n DESC) AS wd_rank FROM (SELECT COLLATE(`zip`, 'binary') AS wd_k0, COLLATE(`city`, 'binary') AS wd_v, MIN(`city`) AS wd_shown, COUNT(*) AS wd_n, MAX(COUNT(*)) OVER (PARTITION BY COLLATE(`zip`, 'binary')) AS wd_top, COUNT(*) OVER (PARTITION BY COLLATE(`zip`, 'binary')) AS wd_values FROM `sales`.`orders` WHERE NOT `zip` IS NULL AND NOT `city` IS NULL GROUP BY COLLATE(`zip`, 'binary'), COLLATE(`city`, 'binary')) AS wd_pairs WHERE wd_values > 1) AS wd_ranked GROUP BY wd_k0) AS m ON COLLATE(`src`.`zip`, 'binary') = `m`.`wd_k0` WHERE (NOT `src`.`zip` IS NULL AND NOT `src`.`city` IS NULL) AND (`m`.`wd_decided` = 0 OR NOT (COLLATE(`src`.`city`, 'binary') IS NOT DISTINCT FROM `m`.`wd_majority_key`)) ORDER BY `src`.`zip`, `src`.`city` LIMIT 5;

-- sample query: orders_without_lines
SELECT * FROM (SELECT o.order_no FROM sales.orders AS o LEFT JOIN sales.lines AS l ON l.order_no = o.order_no WHERE l.order_no IS NULL) AS wd_failing LIMIT 5;

-- anomaly buckets (day): sales.orders.row_count
SELECT DATETIME_TRUNC(CAST(`created_at` AS DATETIME), DAY) AS wd_bucket, COUNT(*) AS wd_a0 FROM `sales`.`orders` WHERE CAST(`created_at` AS DATETIME) >= '2026-02-02 00:00:00' AND CAST(`created_at` AS DATETIME) < '2026-03-04 00:00:00' GROUP BY DATETIME_TRUNC(CAST(`created_at` AS DATETIME), DAY);

-- anomaly buckets (week): sales.orders.email.not_null
SELECT DATETIME_TRUNC(CAST(`created_at` AS DATETIME), WEEK(MONDAY)) AS wd_bucket, COUNT(*) AS wd_a0, SUM(CASE WHEN `email` IS NULL THEN 1 ELSE 0 END) AS wd_a1 FROM `sales`.`orders` WHERE CAST(`created_at` AS DATETIME) >= '2026-01-19 00:00:00' AND CAST(`created_at` AS DATETIME) < '2026-03-02 00:00:00' GROUP BY DATETIME_TRUNC(CAST(`created_at` AS DATETIME), WEEK(MONDAY));

-- anomaly buckets (hour): sales.orders.created_at.freshness
SELECT DATETIME_TRUNC(CAST(`created_at` AS DATETIME), HOUR) AS wd_bucket, MAX(`created_at`) AS wd_a0 FROM `sales`.`orders` WHERE CAST(`created_at` AS DATETIME) >= '2026-02-04 08:00:00' AND CAST(`created_at` AS DATETIME) < '2026-03-04 10:00:00' GROUP BY DATETIME_TRUNC(CAST(`created_at` AS DATETIME), HOUR);
