# fortran/: the ULFM extension for Fortran programs, with Open MPI 5's
# names: mpif-ext.h and the modules mpi_ext and mpi_f08_ext, generated for
# this MPI (fortran/gen-fortran.py) and compiled with its MPIFC, installed
# in $(ftshimlibdir)/include. The calls themselves are in libftshim.so
# (pmpi/fortran.c), which needs no Fortran compiler.

EXTRA_DIST += fortran/gen-fortran.py

if FT_FORTRAN
# Where the tests find the modules (empty: the Fortran ULFM cases skip).
FT_FORTRAN_INC = $(abs_top_builddir)/fortran
ftshimfortrandir = $(ftshimlibdir)/include
ftshimfortran_DATA = fortran/mpif-ext.h fortran/mpi_ext.mod fortran/mpi_f08_ext.mod
CLEANFILES += fortran/mpif-ext.h fortran/mpi_ext.F90 fortran/mpi_f08_ext.F90 \
	fortran/mpi_ext.mod fortran/mpi_f08_ext.mod fortran/mpi_ext.o fortran/mpi_f08_ext.o

FT_FORTRAN_GEN = $(PYTHON) $(srcdir)/fortran/gen-fortran.py $(srcdir)/pmpi/ftshim-api.tsv '$(MPIFC)' \
	$(FT_ERR_PROC_FAILED),$(FT_ERR_PROC_FAILED_PENDING),$(FT_ERR_REVOKED) fortran
fortran/mpif-ext.h: $(srcdir)/fortran/gen-fortran.py $(srcdir)/pmpi/ftshim-api.tsv Makefile
	$(AM_V_GEN)$(MKDIR_P) fortran && $(FT_FORTRAN_GEN)
fortran/mpi_ext.F90 fortran/mpi_f08_ext.F90: fortran/mpif-ext.h
	@test -f $@ || { rm -f fortran/mpif-ext.h; $(MAKE) $(AM_MAKEFLAGS) fortran/mpif-ext.h; }

# gfortran: the generated interfaces have lines longer than 132 columns.
fortran/mpi_ext.mod: fortran/mpi_ext.F90
	$(AM_V_GEN)cd fortran && $(MPIFC) -ffree-line-length-none -c mpi_ext.F90 -o mpi_ext.o
fortran/mpi_f08_ext.mod: fortran/mpi_f08_ext.F90
	$(AM_V_GEN)cd fortran && $(MPIFC) -ffree-line-length-none -c mpi_f08_ext.F90 -o mpi_f08_ext.o
else
FT_FORTRAN_INC =
endif
