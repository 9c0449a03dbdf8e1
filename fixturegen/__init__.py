"""fixturegen: generate, verify and serve libp2p TLS certificate fixtures."""

__version__ = "0.1.0"
