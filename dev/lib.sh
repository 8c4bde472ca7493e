# dev/lib.sh: what dev/setup and dev/test share: the packages the project
# needs, their installation, and the build of both MPI flavours in
# build/mpich and build/openmpi.

FT_FLAVOURS="mpich openmpi"

# Every Debian package the build, the tests, the demo and the benchmarks use.
FT_PACKAGES="build-essential autoconf automake libtool libtool-bin pkg-config
check python3 procps clang llvm iproute2 gfortran gdb
mpich libmpich-dev openmpi-bin libopenmpi-dev libunwind-dev libdw-dev
quantum-espresso quantum-espresso-data libhdf5-mpich-dev libhdf5-openmpi-dev lammps
slurm-wlm munge python3-mpi4py"

say() {
	printf '== %s (at %d s)\n' "$*" "$SECONDS"
}

ft_install_deps() {
	local missing=() p
	for p in $FT_PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	if [ ${#missing[@]} = 0 ]; then
		say "all packages present"
		return 0
	fi
	say "installing: ${missing[*]}"
	local sudo=
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null || {
			echo "dev: need root (or sudo) to install: ${missing[*]}" >&2
			return 1
		}
		sudo=sudo
	fi
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

# Configure (once) and build each flavour in build/FLAVOUR.
ft_build() {
	local top=$PWD f
	if [ ! -x configure ] || [ configure.ac -nt configure ]; then
		say "bootstrap"
		./bootstrap >/dev/null
	fi
	for f in $FT_FLAVOURS; do
		mkdir -p "build/$f"
		if [ ! -f "build/$f/Makefile" ]; then
			say "configure $f"
			(cd "build/$f" && "$top/configure" --with-mpi="$f" -q $FT_CONFIGURE_FLAGS)
		fi
		say "build $f"
		make -C "build/$f" -j2 -s
	done
}
