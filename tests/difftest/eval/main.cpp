// tlc-eval: the differential tester's reference (tests/difftest/README.md). Parses and checks a
// .tl file with tlc's front end, builds its Tile IR and runs it with the reference evaluator on
// the inputs of a data file; writes every tensor parameter's contents after the run.
//
//   tlc-eval FILE.tl [--kernel NAME] [-D NAME=VALUE]... --size NAME=VALUE... --in IN.bin --out OUT.bin
//   tlc-eval FILE.tl [--kernel NAME] [-D NAME=VALUE]... --describe
//
// --describe prints the parameters as JSON instead (name, kind, dtype, and for tensors the
// extents and strides as expressions over the sizes), for tools that make inputs.
//
// Exit codes: 0 ran; 1 the front end rejects the program; 2 usage or data errors; 3 the
// program uses what the evaluator does not model; 4 the program faults at run time.

#include "DataFile.h"
#include "Evaluator.h"

#include "ir/Printer.h"
#include "irgen/IRGen.h"
#include "parser/Parser.h"
#include "sema/Sema.h"
#include "support/LargeStack.h"
#include "support/SourceFile.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

using namespace tlc;

namespace {

struct Options {
    std::string input, kernel, in, out;
    std::map<std::string, std::string> defines;
    std::map<std::string, int64_t> sizes;
    bool describe = false;
};

[[noreturn]] void usage(const std::string& problem) {
    std::cerr << "tlc-eval: error: " << problem << "\n"
              << "usage: tlc-eval FILE.tl [--kernel NAME] [-D NAME=VALUE]... --size NAME=VALUE... --in IN.bin --out OUT.bin\n";
    std::exit(2);
}

std::pair<std::string, std::string> splitAssignment(const std::string& text, const char* flag) {
    size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0) usage(std::string(flag) + " wants NAME=VALUE, not '" + text + "'");
    return {text.substr(0, eq), text.substr(eq + 1)};
}

Options parseArgs(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](const char* flag) -> std::string {
            if (i + 1 >= argc) usage(std::string(flag) + " needs a value");
            return argv[++i];
        };
        if (a == "--describe") o.describe = true;
        else if (a == "--kernel") o.kernel = value("--kernel");
        else if (a == "--in") o.in = value("--in");
        else if (a == "--out") o.out = value("--out");
        else if (a == "-D" || (a.rfind("-D", 0) == 0 && a.size() > 2)) {
            auto [name, v] = splitAssignment(a == "-D" ? value("-D") : a.substr(2), "-D");
            o.defines[name] = v;
        } else if (a == "--size") {
            auto [name, v] = splitAssignment(value("--size"), "--size");
            char* end = nullptr;
            long long n = std::strtoll(v.c_str(), &end, 10);
            if (v.empty() || *end) usage("--size " + name + " wants an integer, not '" + v + "'");
            o.sizes[name] = n;
        } else if (!a.empty() && a[0] == '-') usage("unknown option '" + a + "'");
        else if (o.input.empty()) o.input = a;
        else usage("more than one input file");
    }
    if (o.input.empty() || (!o.describe && (o.in.empty() || o.out.empty())))
        usage("FILE.tl, and --in and --out or --describe, are required");
    return o;
}

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
}

std::string exprList(const std::vector<ir::Expr>& es) {
    std::string out;
    for (const ir::Expr& e : es) out += (out.empty() ? "" : ", ") + quoted(ir::printExpr(e));
    return "[" + out + "]";
}

// The parameters as the caller passes them (scratch is the launcher's business).
std::string describe(const ir::Kernel& k) {
    std::ostringstream out;
    out << "{\"kernel\": " << quoted(k.group.empty() ? k.name : k.group) << ", \"params\": [";
    bool first = true;
    for (const ir::KernelParam& p : k.params) {
        if (p.scratch) continue;
        static const char* kinds[] = {"tensor", "scalar", "size"};
        out << (first ? "" : ", ") << "{\"name\": " << quoted(p.name) << ", \"kind\": \"" << kinds[int(p.kind)]
            << "\", \"dtype\": \"" << dtypeName(p.dtype) << "\"";
        if (p.kind == ir::KernelParam::Kind::Tensor)
            out << ", \"shape\": " << exprList(p.buffer->shape) << ", \"strides\": " << exprList(p.buffer->strides);
        out << "}";
        first = false;
    }
    out << "]}";
    return out.str();
}

} // namespace

int main(int argc, char** argv) {
    Options o = parseArgs(argc, argv);
    std::ifstream file(o.input, std::ios::binary);
    if (!file) usage("cannot read '" + o.input + "'");
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::vector<eval::DataEntry> inputs;
    std::string error;
    if (!o.describe && !eval::readDataFile(o.in, inputs, error)) usage(error);

    SourceFile source(o.input, std::move(text));
    DiagnosticEngine diags(source);
    int status = 0;
    runWithLargeStack([&] {
        std::unique_ptr<ast::File> ast = parseFile(source, diags);
        SemaOptions semaOptions;
        semaOptions.defines = o.defines;
        if (!ast || !checkFile(*ast, diags, semaOptions)) {
            status = 1;
            return;
        }
        const ast::Kernel* kernel = nullptr;
        for (const auto& k : ast->kernels)
            if (o.kernel.empty() ? ast->kernels.size() == 1 : k->name == o.kernel) kernel = k.get();
        if (!kernel) {
            std::cerr << "tlc-eval: error: " << (o.kernel.empty() ? "the file has several kernels: name one with --kernel"
                                                                  : "no kernel '" + o.kernel + "'")
                      << "\n";
            status = 2;
            return;
        }
        std::vector<ir::Kernel> parts = buildKernelIRs(*kernel, source, diags);
        if (diags.hasErrors() || parts.empty()) {
            status = 1;
            return;
        }
        if (o.describe) {
            std::cout << describe(parts.front()) << "\n";
            return;
        }
        // Inputs: the tensors and scalars the caller passes, in source order.
        eval::Problem problem;
        problem.sizes = o.sizes;
        std::vector<std::string> tensors;
        size_t next = 0;
        for (const ir::KernelParam& p : parts.front().params) {
            if (p.kind == ir::KernelParam::Kind::Size || p.scratch) continue;
            if (next >= inputs.size() || inputs[next].name != p.name) {
                std::cerr << "tlc-eval: error: entry " << next + 1 << " of " << o.in << " should be parameter '"
                          << p.name << "'\n";
                status = 2;
                return;
            }
            if (p.kind == ir::KernelParam::Kind::Scalar) {
                if (inputs[next].values.size() != 1) {
                    std::cerr << "tlc-eval: error: scalar '" << p.name << "' needs one value\n";
                    status = 2;
                    return;
                }
                problem.scalars[p.name] = inputs[next].values[0];
            } else {
                problem.tensors[p.name] = inputs[next].values;
                tensors.push_back(p.name);
            }
            ++next;
        }
        try {
            eval::runKernel(parts, problem);
        } catch (const eval::Unsupported& e) {
            std::cerr << "tlc-eval: unsupported: " << e.what() << "\n";
            status = 3;
            return;
        } catch (const eval::Fault& e) {
            std::cerr << "tlc-eval: fault: " << e.what() << "\n";
            status = 4;
            return;
        }
        std::vector<eval::DataEntry> outputs;
        for (const std::string& name : tensors) outputs.push_back({name, problem.tensors[name]});
        if (!eval::writeDataFile(o.out, outputs, error)) {
            std::cerr << "tlc-eval: error: " << error << "\n";
            status = 2;
        }
    });
    if (diags.hasErrors() || status == 1) diags.printText(std::cerr);
    return status;
}
