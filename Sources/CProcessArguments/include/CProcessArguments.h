#ifndef C_PROCESS_ARGUMENTS_H
#define C_PROCESS_ARGUMENTS_H

/// The Swift runtime's hooks for `CommandLine.arguments`, defined by hubscript itself
/// (process_arguments.c explains why). Nothing in Swift calls these directly.
char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen);
void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc);

#endif
