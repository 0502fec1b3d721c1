print("countries")
