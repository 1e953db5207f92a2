// hubscript's own definition of the two functions behind Swift's `CommandLine.arguments`.
//
// In the statically linked Swift runtime they live in CommandLine.cpp.o of libswiftCore.a,
// whose static constructor finds argv by reading /proc/self/maps and parsing every line
// with sscanf: an open, several reads of a file the kernel generates, and a parse, at
// every start (docs/performance.md, "What start-up avoids"). glibc hands
// argc and argv to every .init_array function of the program, so this file keeps them
// from there; defining both functions here means the linker never takes that archive
// member (and never runs its constructor). scripts/test-release checks that it is gone.
//
// Should a future runtime call these before .init_array has run, the arguments are read
// from /proc/self/cmdline instead, as older runtimes did.
#include "CProcessArguments.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char **given_argv;
static int given_argc;
static char **override_argv;
static int override_argc;

static void keep_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    given_argc = argc;
    given_argv = argv;
}

__attribute__((section(".init_array"), used))
static void (*const keep_arguments_entry)(int, char **, char **) = keep_arguments;

static char **read_proc_cmdline(int *count) {
    static char *none[1] = { NULL };
    FILE *file = fopen("/proc/self/cmdline", "rb");
    if (file == NULL) { *count = 0; return none; }
    char **list = NULL;
    int n = 0;
    char *arg = NULL;
    size_t size = 0;
    while (getdelim(&arg, &size, 0, file) != -1) {
        char **grown = realloc(list, sizeof(char *) * (size_t)(n + 2));
        if (grown == NULL) break;
        list = grown;
        list[n++] = strdup(arg);
        list[n] = NULL;
    }
    free(arg);
    fclose(file);
    *count = n;
    return list != NULL ? list : none;
}

char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    if (override_argv != NULL) {
        *outArgLen = override_argc;
        return override_argv;
    }
    if (given_argv != NULL) {
        *outArgLen = given_argc;
        return given_argv;
    }
    return read_proc_cmdline(outArgLen);
}

void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc) {
    override_argv = argv;
    override_argc = argc;
}
