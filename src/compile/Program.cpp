#include "compile/Program.h"

#include "beginner/WholeTensor.h"
#include "parser/Parser.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc {

namespace {

// -D NAME=auto: every kernel's compile-time parameter NAME becomes `auto`; a name no kernel has
// as one (a size, nothing) is an error about the command line.
bool markAutoParams(ast::File& file, const std::set<std::string>& names, DiagnosticEngine& diags) {
    bool ok = true;
    for (const std::string& name : names) {
        bool found = false;
        for (auto& k : file.kernels)
            for (auto& tp : k->templateParams)
                if (tp.name == name) {
                    tp.isAuto = true;
                    tp.defaultValue.reset();
                    found = true;
                }
        if (!found) {
            diags.reportCommandLine(DiagId::err_define_auto_unknown, name);
            ok = false;
        }
    }
    return ok;
}

} // namespace

std::unique_ptr<Program> Program::parse(const SourceFile& source, DiagnosticEngine& diags,
                                        const std::map<std::string, std::string>& defines,
                                        const std::set<std::string>& autoParams) {
    std::unique_ptr<ast::File> file = parseFile(source, diags);
    if (!file) return nullptr;
    if (!markAutoParams(*file, autoParams, diags)) return nullptr;
    // The beginner level's whole-tensor kernels become tile dataflow before anything checks them.
    if (!beginner::lowerWholeTensorKernels(*file, diags, defines)) return nullptr;
    return std::unique_ptr<Program>(new Program(source, std::move(file)));
}

const ast::Kernel* Program::kernel(std::string_view name) const {
    for (const auto& k : syntax_->kernels)
        if (k->name == name) return k.get();
    return nullptr;
}

bool hasOpenAutoParams(const ast::Kernel& kernel, const std::map<std::string, std::string>& defines) {
    return std::any_of(kernel.templateParams.begin(), kernel.templateParams.end(),
                       [&](const ast::TemplateParam& tp) { return tp.isAuto && !defines.count(tp.name); });
}

std::string severalGridsOrScratch(const ast::Kernel& k) {
    int grids = 0;
    bool scratch = false;
    for (const auto& s : k.body->stmts) {
        grids += s->kind == ast::StmtKind::Grid ? 1 : 0;
        if (const auto* let = s->as<ast::LetStmt>())
            if (const auto* c = let->value->as<ast::Call>(); c && c->callee == "alloc_global") scratch = true;
    }
    if (grids > 1) return fmt::format("{} grids", grids);
    return scratch ? "global scratch (alloc_global)" : "";
}

std::set<std::string> symbolicSizeNames(const ast::Kernel& k) {
    std::set<std::string> params, out;
    for (const auto& tp : k.templateParams) params.insert(tp.name);
    for (const auto& p : k.params)
        for (const auto& d : p.type.dims)
            ast::forEachName(d.get(), [&](const ast::Name& n) {
                if (!params.count(n.name)) out.insert(n.name);
            });
    return out;
}

std::set<std::string> integerScalarNames(const ast::Kernel& k) {
    std::set<std::string> out;
    for (const auto& p : k.params)
        if (!p.type.isTensor())
            if (auto t = parseDType(p.type.dtype); t && isInteger(*t)) out.insert(p.name);
    return out;
}

} // namespace tlc
