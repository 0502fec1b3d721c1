// Placeholder until the benchmark lands.
print("countries-bench")
