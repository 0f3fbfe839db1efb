// Test kit placeholder.
