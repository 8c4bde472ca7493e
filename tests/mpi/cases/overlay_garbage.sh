# Strangers on the control port: random bytes, a well-formed failure
# notice with the wrong secret (claiming rank 1 failed), an oversized
# frame and a short one are rejected and counted; nobody is declared
# failed and the job finishes cleanly.
prog=$(build detect)
start_job shim 4 FTSHIM_LOG=debug "FTSHIM_LOG_FILE=$MPITEST_WORKDIR/ft.%r.log" -- "$prog" --linger-ms 4000
for i in $(seq 1 100); do
	grep -q 'control plane at' "$MPITEST_WORKDIR/ft.0.log" 2>/dev/null && break
	sleep 0.1
done
port=$(sed -n 's/.*control plane at [0-9.]*:\([0-9]*\).*/\1/p' "$MPITEST_WORKDIR/ft.0.log" | head -n 1)
[ -n "$port" ] || fail "rank 0 did not log its control-plane port"
python3 - "$port" <<'PY' || fail "could not talk to the control port"
import os, socket, struct, sys, time
port = int(sys.argv[1])
def send(data):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(data)
    time.sleep(0.2)
    s.close()
send(os.urandom(200))
entry = struct.pack("<IHHI", 1, 1, 1, 0)
payload = struct.pack("<I", 1) + entry
header = b"FTSH" + bytes([1, 2, 0, 0]) + struct.pack("<II", len(payload), 2) + os.urandom(16)
send(header + payload)
send(b"FTSH" + bytes([1, 1, 0, 0]) + struct.pack("<II", 1 << 30, 2) + bytes(16))
send(b"FTSH\x01\x01")
PY
wait_job
expect_rc 0
expect_all_checks
cat "$MPITEST_WORKDIR"/ft.*.log >"$ERR.logs"
if grep -q 'info: rank [0-9]* failed' "$ERR.logs"; then
	fail "a stranger's frame made a rank fail: $(grep 'failed' "$ERR.logs" | head -n 1)"
fi
rejected=$(sed -n 's/^ftshim\[0\].*control plane: .* \([0-9]*\) rejected.*/\1/p' "$MPITEST_WORKDIR/ft.0.log")
[ "${rejected:-0}" -ge 4 ] || { cat "$MPITEST_WORKDIR/ft.0.log" >&2; fail "rank 0 rejected ${rejected:-no} frames, expected at least 4"; }
note "rank 0 rejected $rejected frames"
expect_no_leftovers detect
