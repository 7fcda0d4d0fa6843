# Shared by bench/python_vs_cli.sh and bench/charlm_vs_pytorch.sh (sourced after their options):
# the binaries they run, a scratch folder removed on exit, and the median of stdin's numbers.
clgrad=${CLGRAD_BIN:-build/clgrad}
py=${PYTHON:-.venv/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
