run --no-such-flag
