print("lifecycle-bench")
