# broker/: see docs/HACKING.md
