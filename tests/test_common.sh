# Sourced by the shell tests (. "$(dirname "$0")/test_common.sh"): the preambles they share.
# need_fashion_mnist: sets data, or skips (77) where Debian's dataset-fashion-mnist is absent.
# first_opencl_device CLGRAD: sets dev to the first OpenCL device's index, or skips (77).
need_fashion_mnist() {
	data=/usr/share/datasets/fashion-mnist
	if [ ! -e "$data/train-images-idx3-ubyte.gz" ]; then
		echo "Fashion-MNIST not installed ($data): skipped"
		exit 77
	fi
}

first_opencl_device() {
	dev=$("$1" devices --json | python3 -c 'import json,sys
d=[x["index"] for x in json.load(sys.stdin)["devices"] if x["type"] != "ref"]
print(d[0] if d else "")')
	if [ -z "$dev" ]; then
		echo "no OpenCL device present: skipped"
		exit 77
	fi
}

# t_workdir: a temporary folder in $work, removed when the script exits (its EXIT trap).
t_workdir() {
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
}

# fail MESSAGE: the test's failure, said on stdout (ctest shows it), exit status 1.
fail() { echo "FAIL: $*"; exit 1; }
