"""Command-line interface: one module per command group, thin over the library."""
