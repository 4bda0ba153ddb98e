"""One run from start to finish: compute (the stages, writing nothing), scan_run, filing (the only writer of a run
folder), audit, review gate, demo."""
