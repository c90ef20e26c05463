#!/usr/bin/env bash
# Lists and calls every memvault tool through an independent client, the MCP Inspector CLI
# (from the npm registry), over stdio and over HTTP. Prints one line per call; exits non-zero
# on the first failure. Usage: scripts/inspector_check.sh  (run `make install` first)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill "${server:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
npm install --prefix "$work/npm" --silent @modelcontextprotocol/inspector >/dev/null 2>&1
inspector="$work/npm/node_modules/.bin/mcp-inspector"
memvault="$PWD/.venv/bin/memvault"

call() {  # call TARGET... -- METHOD ARGS...: run one inspector call, fail on an error result
  local out
  out=$("$inspector" --cli "$@")
  if grep -q '"isError": true' <<<"$out"; then echo "FAILED: $*"; echo "$out"; exit 1; fi
  printf '%s\n' "$out"
}

check() {  # check LABEL TARGET...: every tool once, in an order that makes sense
  local label=$1; shift
  names=$(call "$@" --method tools/list | python3 -c \
    'import json,sys; print(" ".join(sorted(t["name"] for t in json.load(sys.stdin)["tools"])))')
  echo "$label tools: $names"
  a=$(call "$@" --method tools/call --tool-name write_mem --tool-arg "title=Inspector $label A" \
      --tool-arg "content=Checked by the MCP Inspector" --tool-arg 'tags=["inspector"]' \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["structuredContent"]["id"])')
  b=$(call "$@" --method tools/call --tool-name write_mem --tool-arg "title=Inspector $label B" \
      --tool-arg "content=Second note" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["structuredContent"]["id"])')
  for args in \
    "read_mem identifier=$a format=json" \
    "edit_mem id=$a append=appended-by-inspector" \
    "search_mem query=inspector" \
    "list_mem sort=title" \
    "link_mem source_id=$a target_id=$b" \
    "unlink_mem source_id=$a target_id=$b" \
    "get_current_date format=iso" \
    "verify_mem id=$a" \
    "get_context max_tokens=500" \
    "export_mem include_archived=true" \
    "save_session_notes summary=checked-$a" \
    "delete_mem id=$b"; do
    read -r tool rest <<<"$args"
    targs=(); for kv in $rest; do targs+=(--tool-arg "$kv"); done
    call "${@}" --method tools/call --tool-name "$tool" "${targs[@]}" >/dev/null
    echo "$label $tool: ok"
  done
}

vault="$work/vault"
mkdir -p "$vault"
check stdio "$memvault" --vault "$vault" serve
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$memvault" --vault "$vault" serve --transport http --port "$port" 2>/dev/null &
server=$!
python3 - "$port" <<'PY'
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.2).close()
        break
    except OSError:
        time.sleep(0.1)
PY
check http "http://127.0.0.1:$port/mcp" --transport http
echo "every tool answered through the MCP Inspector CLI over stdio and HTTP"
