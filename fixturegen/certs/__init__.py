"""Certificate building: DER writer, signature schemes, the libp2p extension, TBS assembly."""
