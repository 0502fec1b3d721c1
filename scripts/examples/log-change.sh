#!/usr/bin/env bash
# An on-change handler: appends one line per change to a log file and, where a desktop
# notifier exists, shows a notification.
#   countries on-change -- scripts/examples/log-change.sh
# The log is $COUNTRIES_LOG (default: ./countries-changes.log). The event's JSON is on stdin.
set -euo pipefail
log="${COUNTRIES_LOG:-countries-changes.log}"
event_json="$(cat)"

case "$COUNTRIES_EVENT" in
changed) what="$COUNTRY_NAME is now $([[ "$COUNTRY_VISITED" == true ]] && echo visited || echo not visited)" ;;
added) what="$COUNTRY_NAME was added at $COUNTRY_INDEX" ;;
removed) what="$COUNTRY_NAME was removed" ;;
reset) what="the list was reset" ;;
*) what="$COUNTRIES_EVENT" ;;
esac

printf '%s seq=%s %s %s\n' "$(date -u +%FT%TZ)" "$COUNTRIES_SEQ" "$what" "$event_json" >>"$log"
if command -v notify-send >/dev/null && [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]]; then
    notify-send "countries" "$what" || true
fi
