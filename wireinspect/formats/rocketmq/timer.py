"""RocketMQ 5's timer store (placeholder: filled in below)."""
