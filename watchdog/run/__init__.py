"""One run from start to finish: scan_run, filing (the only writer of a run folder), audit, review gate, demo."""
