// emit(): the file-level assembly. The kernels are printed first (that decides which runtime
// sections and headers the file needs), then the file is put together: banner, includes,
// runtime sections, the namespace with kernels and launchers, the extern "C" twins.
#include "emit/Emit.h"

#include "emit/CEmitter.h"

#include <fmt/format.h>

namespace tlc {

using namespace codegen;

namespace {

std::unique_ptr<CEmitter> makeEmitter(const Target& target, const EmitOptions& options) {
    switch (target.backend) {
    case Backend::Cuda: return makeCudaEmitter(target, options);
    case Backend::Hip: return makeHipEmitter(target, options);
    case Backend::Cpu: return makeCpuEmitter(target, options);
    }
    throw EmitError("emit: unknown backend");
}

// "a::b" -> {"a", "b"}, each a valid identifier.
std::vector<std::string> namespaceParts(const std::string& ns) {
    std::vector<std::string> parts;
    size_t pos = 0;
    while (pos <= ns.size() && !ns.empty()) {
        size_t sep = ns.find("::", pos);
        std::string part = ns.substr(pos, sep == std::string::npos ? std::string::npos : sep - pos);
        if (sanitizeIdentifier(part) != part) throw EmitError("emit: '" + ns + "' is not a usable C++ namespace");
        parts.push_back(part);
        if (sep == std::string::npos) break;
        pos = sep + 2;
    }
    return parts;
}

std::string baseName(const std::string& path) {
    size_t slash = path.find_last_of("/\\");
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The source's own name for #line after a kernel.
std::string outputFileName(const EmitOptions& options, const Target& target) {
    if (!options.outputName.empty()) return baseName(options.outputName);
    std::string stem = options.headerName.empty() ? "kernel" : baseName(options.headerName);
    if (size_t dot = stem.rfind('.'); dot != std::string::npos && !options.headerName.empty()) stem.resize(dot);
    return stem + std::string(target.sourceExtension());
}

// Replaces the "#line @TLC_OUTPUT_LINE@" markers with the line that follows them in `text`.
std::string resolveLineMarkers(const std::string& text, const std::string& fileName) {
    const std::string marker = "#line @TLC_OUTPUT_LINE@";
    std::string out;
    int lineNo = 1;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
        if (line == marker) line = fmt::format("#line {} \"{}\"", lineNo + 1, escapeCString(fileName));
        out += line;
        if (eol == std::string::npos) break;
        out += '\n';
        ++lineNo;
        pos = eol + 1;
    }
    return out;
}

void openNamespace(CodeWriter& w, const std::vector<std::string>& parts) {
    if (parts.empty()) return;
    std::string name;
    for (const auto& p : parts) name += (name.empty() ? "" : "::") + p;
    w.line("namespace " + name + " {");
    w.blank();
}

void closeNamespace(CodeWriter& w, const std::vector<std::string>& parts) {
    if (parts.empty()) return;
    std::string name;
    for (const auto& p : parts) name += (name.empty() ? "" : "::") + p;
    w.line("} // namespace " + name);
    w.blank();
}

} // namespace

EmitResult emit(const std::vector<ir::Kernel>& kernels, const Target& target, const EmitOptions& options) {
    std::vector<std::string> ns = namespaceParts(options.nameSpace);
    std::unique_ptr<CEmitter> emitter = makeEmitter(target, options);
    emitter->prepare(kernels);

    std::string tlName = options.sourceName.empty() && !kernels.empty() ? kernels[0].sourceName : options.sourceName;
    if (tlName.empty()) tlName = "a .tl file";
    const std::string outName = outputFileName(options, target);
    const bool header = !options.headerName.empty();

    // The parts of a group (a kernel of several grids or with global scratch) are consecutive:
    // the group's launcher and workspace_size come with its first part (declarations) or after
    // its last (definitions); the parts' own launchers are static (groupParts).
    bool groups = false;
    for (const auto& k : kernels) groups = groups || !k.group.empty();

    // Launcher declarations (the header's contents, or the top of the source without one).
    CodeWriter decls;
    // A kernel's general variant (ir::Kernel::generalShapes) has a static launcher, which only
    // its fast variant's calls: no declaration, no twin, and its code comes first.
    for (size_t i = 0; i < kernels.size(); ++i) {
        const ir::Kernel& k = kernels[i];
        if (k.generalShapes) continue;
        if (k.group.empty()) emitter->emitLauncherDeclaration(k, decls);
        else if (k.part == 0) emitter->emitGroupDeclaration(groupParts(kernels, i), decls);
    }
    for (const auto& v : options.variants) emitter->emitDispatcherDeclaration(v, kernels, decls);
    CodeWriter cDecls;
    cDecls.line(target.backend == Backend::Cpu
                    ? "// For C and FFI callers: tensors as void pointers; the stream is unused on the CPU."
                    : "// For C and FFI callers: tensors as void pointers, the stream as void*, the status as int.");
    for (size_t i = 0; i < kernels.size(); ++i) {
        const ir::Kernel& k = kernels[i];
        if (k.generalShapes) continue;
        if (k.group.empty()) emitter->emitCTwinDeclaration(k, cDecls);
        else if (k.part == 0) emitter->emitGroupCTwinDeclaration(groupParts(kernels, i), cDecls);
    }
    for (const auto& v : options.variants) emitter->emitDispatcherCTwinDeclaration(v, kernels, cDecls);

    // The kernels and launcher definitions, and the extern "C" twins.
    CodeWriter body;
    auto emitOne = [&](size_t i) {
        emitter->emitKernel(kernels[i], body);
        const ir::Kernel& k = kernels[i];
        if (!k.group.empty() && k.part + 1 == k.parts) emitter->emitGroup(groupParts(kernels, i - size_t(k.part)), body);
    };
    for (size_t i = 0; i < kernels.size(); ++i) {
        const ir::Kernel& k = kernels[i];
        if (k.generalShapes) continue;
        if (!k.generalVariant.empty() && (k.group.empty() || k.part == 0))
            for (size_t j = 0; j < kernels.size(); ++j)
                if (ir::isGeneralVariantOf(kernels[j], k)) emitOne(j);
        emitOne(i);
    }
    for (const auto& v : options.variants) emitter->emitDispatcher(v, kernels, body);
    CodeWriter twins;
    for (size_t i = 0; i < kernels.size(); ++i) {
        const ir::Kernel& k = kernels[i];
        if (k.generalShapes) continue;
        if (k.group.empty()) emitter->emitCTwinDefinition(k, twins);
        else if (k.part == 0) emitter->emitGroupCTwinDefinition(groupParts(kernels, i), twins);
    }
    for (const auto& v : options.variants) emitter->emitDispatcherCTwinDefinition(v, kernels, twins);

    std::set<DType> paramTypes;
    for (const auto& k : kernels)
        for (const auto& p : k.params) paramTypes.insert(p.dtype);
    RuntimeNeeds headerNeeds(emitter->runtimeNeeds().spelling());
    emitter->headerRuntime(paramTypes, headerNeeds);

    EmitResult result;
    auto banner = [&](const std::string& file) {
        return fmt::format("// {}generated by tlc from {} for {}; do not edit.\n// Target: {}.\n",
                           file.empty() ? "" : file + ": ", commentText(tlName), target.name,
                           commentText(target.description));
    };

    if (header) {
        CodeWriter h;
        h.raw(banner(baseName(options.headerName)));
        h.directive("#pragma once");
        h.blank();
        for (const auto& l : emitter->headerPrologue()) h.directive(l);
        std::vector<std::string> includes;
        for (const auto& inc : emitter->headerIncludes(paramTypes)) includes.push_back("#include " + inc);
        if (groups) includes.push_back("#include <cstddef>");  // size_t of NAME_workspace_size
        h.raw(includeLines(includes, headerNeeds.includes()));
        h.blank();
        if (!headerNeeds.empty()) {
            h.raw(headerNeeds.render());
            h.blank();
        }
        openNamespace(h, ns);
        h.raw(decls.str());
        closeNamespace(h, ns);
        h.raw(cDecls.str());
        result.header = h.take();
    }

    CodeWriter s;
    s.raw(banner(outName));
    if (header) {
        s.directive("#include \"" + escapeCString(options.headerName) + "\"");
        s.blank();
    } else {
        for (const auto& l : emitter->headerPrologue()) s.directive(l);
    }
    if (auto prologue = emitter->sourcePrologue(); !prologue.empty()) {
        for (const auto& l : prologue) s.raw(l + "\n");
        s.blank();
    }
    std::vector<std::string> includes;
    for (const auto& inc : emitter->sourceIncludes()) includes.push_back("#include " + inc);
    if (!header)
        for (const auto& inc : emitter->headerIncludes(paramTypes)) includes.push_back("#include " + inc);
    if (!header && groups) includes.push_back("#include <cstddef>");
    // The runtime sections beyond the header's; without a header, the header's first.
    std::string runtime = emitter->runtimeNeeds().render(&headerNeeds);
    std::vector<std::string> runtimeIncludes = emitter->runtimeNeeds().includes(&headerNeeds);
    if (!header) {
        runtime = headerNeeds.render() + runtime;
        std::vector<std::string> first = headerNeeds.includes();
        runtimeIncludes.insert(runtimeIncludes.begin(), first.begin(), first.end());
    }
    s.raw(includeLines(includes, runtimeIncludes));
    s.blank();
    if (auto open = emitter->codeRegionOpen(); !open.empty()) {
        for (const auto& l : open) s.raw(l + "\n");
        s.blank();
    }
    if (!runtime.empty()) {
        s.raw(runtime);
        s.blank();
    }
    openNamespace(s, ns);
    if (!header) s.raw(decls.str());
    s.raw(body.str());
    closeNamespace(s, ns);
    if (!header) {
        s.raw(cDecls.str());
        s.blank();
    }
    s.raw(twins.str());
    if (auto close = emitter->codeRegionClose(); !close.empty()) {
        s.blank();
        for (const auto& l : close) s.raw(l + "\n");
    }
    if (options.manifest) result.manifest = emitter->manifest(kernels, tlName);
    if (options.python) {
        if (!header) throw EmitError("emit: the Python binding includes the launcher header: give a header name");
        result.python = emitter->pythonBinding(kernels, tlName);
    }
    std::string source = s.take();
    while (source.size() >= 2 && source.substr(source.size() - 2) == "\n\n") source.pop_back();
    result.source = options.lineDirectives ? resolveLineMarkers(source, outName) : source;
    if (!result.header.empty())
        while (result.header.size() >= 2 && result.header.substr(result.header.size() - 2) == "\n\n")
            result.header.pop_back();
    return result;
}

} // namespace tlc
