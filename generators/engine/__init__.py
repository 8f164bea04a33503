"""The one layer that touches Hypothesis's internals: the kit's own draws, seeding, and
the replay of saved choice sequences. Everything else builds on public strategies."""
