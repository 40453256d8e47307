#include "support/LargeStack.h"

#include <pthread.h>

#include <exception>

namespace tlc {

namespace {
struct Job {
    const std::function<void()>* fn;
    std::exception_ptr error;
};

void* trampoline(void* arg) {
    auto* job = static_cast<Job*>(arg);
    try {
        (*job->fn)();
    } catch (...) {
        job->error = std::current_exception();
    }
    return nullptr;
}
} // namespace

void runWithLargeStack(const std::function<void()>& fn, size_t stackBytes) {
    Job job{&fn, nullptr};
    pthread_attr_t attr;
    pthread_t thread;
    bool started = pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, stackBytes) == 0 &&
                   pthread_create(&thread, &attr, trampoline, &job) == 0;
    pthread_attr_destroy(&attr);
    if (!started) {
        fn();  // no thread available: run here, within the ordinary stack
        return;
    }
    pthread_join(thread, nullptr);
    if (job.error) std::rethrow_exception(job.error);
}

} // namespace tlc
