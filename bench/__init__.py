"""watchdog's benchmarks: scan speed against the limit and the peers, verify_fn accuracy, LLM cost, scheduler.

Run everything with ``bench/run`` (see bench/README.md); ``python -m bench --help`` lists the options.
"""
