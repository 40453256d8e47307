// For the simulator's self-tests of broken protocols (cluster_selftest.cpp,
// named_barrier_selftest.cpp): whether running `body` in a child process ends in abort(), as
// the simulator ends a launch that deadlocks or leaves a barrier's arrivals pending.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

template <typename Body> bool abortsInChild(Body body) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        body();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}
