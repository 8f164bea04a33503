"""Where the expected outcome comes from: the reference decoder, the envelope and journal
readers, the register of readings, and the fixture format that stores their answers."""
