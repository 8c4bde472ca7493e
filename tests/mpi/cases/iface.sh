# FTSHIM_IFACE binds the control plane to one interface (here loopback,
# by name and by address); detection works through it.
prog=$(build detect)
for iface in lo 127.0.0.1; do
	run_job shim 4 FTSHIM_IFACE=$iface FTSHIM_LOG=debug -- "$prog" --kill 2@200 --how sigkill
	expect_all_checks
	expect_detected 2 "$(survivors 4 2)"
	expect_err_match "debug: detector on: control plane at 127\.0\.0\.1:[0-9]+$"
done
expect_no_leftovers detect
