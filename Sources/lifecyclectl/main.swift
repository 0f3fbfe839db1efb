// lifecyclectl: the command-line client (being written).
print("lifecyclectl")
