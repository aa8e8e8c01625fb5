#!/usr/bin/env bash
# daemons.sh under 20% random loss on both sides (nftables numgen drop rule,
# as tests/integration/loss.sh), with ten more tunnels so that it shows:
# retransmissions, duplicates and their acknowledgements still lint clean.
INSPECT_LOSS=${INSPECT_LOSS:-20}
INSPECT_TUNNELS=${INSPECT_TUNNELS:-10}
. "$(dirname "$0")/daemons.sh"
