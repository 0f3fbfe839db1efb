// lifecycled: the host daemon (being written).
print("lifecycled")
