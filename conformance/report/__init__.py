"""Reports in the forms people and CI read, and the work on finished reports (merge, diff)."""
