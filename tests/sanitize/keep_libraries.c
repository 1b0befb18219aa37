/* Preloaded by tests/sanitize/rank.sh: dlclose() does nothing, so the Open MPI components that MPI_Finalize unloads
 * stay mapped.  Without it the leak reports of their allocations have "<unknown module>" frames, which neither a
 * suppression nor a reader can place, and every such frame makes the sanitizer re-read /proc/self/maps (about a
 * second of system time per rank at exit). */
int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
