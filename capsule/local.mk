# capsule/: see docs/HACKING.md
