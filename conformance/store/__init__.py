"""What a run keeps between runs: the case cache, the example database and the recordings
that seed generated runs."""
