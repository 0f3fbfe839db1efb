print("lifecycle-example")
