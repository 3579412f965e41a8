"""The batch run: the runner (lock, recover, list, stage, process in isolation, place, archive,
record), watch, the run report, the ledger, the settings and the file names."""
