"""Built-in connectors: one module per connector, each defining a module-level `CONNECTOR`."""
