"""Profile a database through the sandbox and suggest a starter suite proven on its data.

Nothing leaves the database but aggregates: one batched SELECT per table, one GROUP BY per
low-cardinality column, and the catalog queries that read the schema.
"""
