run --entry other
