"""Where runs live on disk and how they are written: layout, state, ledger, locks, logs, snapshots."""
