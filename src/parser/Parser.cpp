// The parsing driver: checks the bytes, lexes, screens the tokens for what would hurt the parser
// (bad characters, unterminated comments, absurd nesting), parses with ANTLR (fast SLL first,
// full LL with error recovery only when SLL fails) and hands the tree to the AST builder.
// Syntax errors are reported through DiagnosticEngine in words, not ANTLR's token dumps.
#include "parser/Parser.h"

#include "parser/ASTBuilder.h"
#include "support/Utf8.h"

#include "TLLexer.h"
#include "TLParser.h"

#include <algorithm>
#include <set>

namespace tlc {

namespace {

using parser::tokenBegin;
using parser::tokenEnd;

// The location of a byte offset in columns as SourceLoc counts them (code points). The text
// before `offset` is valid UTF-8 (the offset is where validation failed).
SourceLoc locationOfOffset(const std::string& text, size_t offset) {
    SourceLoc loc{1, 1};
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            ++loc.line;
            loc.col = 1;
        } else if ((c & 0xC0) != 0x80) {
            ++loc.col;
        }
    }
    return loc;
}

SourceRange rangeOf(const antlr4::Token* t) { return {tokenBegin(t), tokenEnd(t)}; }

std::string clip(const std::string& text) { return clipUtf8(text, 32); }

// Names tokens the way a person would: "';'", "identifier 'x'", "end of file".
std::string describeToken(const antlr4::Token* t) {
    switch (t->getType()) {
    case antlr4::Token::EOF:
        // The end of a group of kernels (see parseFile) stands for the `kernel` that follows.
        return t->getText() == "<EOF>" ? "end of file" : "'" + clip(t->getText()) + "'";
    case TLLexer::ID: return "identifier '" + clip(t->getText()) + "'";
    case TLLexer::INT: return "integer '" + clip(t->getText()) + "'";
    case TLLexer::FLOAT: return "number '" + clip(t->getText()) + "'";
    case TLLexer::STRING: return "string " + clip(t->getText());
    default: return "'" + clip(t->getText()) + "'";
    }
}

// What could have come instead of `found`. The token that was found is never among them: an
// expected set that holds it was computed at another position (see expectedAtDeadEnd).
// Operators and assignments are named as groups, so that what remains is readable.
std::string describeExpected(const antlr4::misc::IntervalSet& set, const antlr4::dfa::Vocabulary& vocab,
                             const antlr4::Token* found) {
    // `auto` starts an expression too (alloc_shared(auto, f16)), but is not worth naming.
    static const std::set<size_t> exprStart = {TLLexer::ID,   TLLexer::INT,   TLLexer::FLOAT, TLLexer::STRING,
                                               TLLexer::TRUE, TLLexer::FALSE, TLLexer::AUTO};
    static const std::set<std::string> binaryOps = {"'*'",  "'/'",  "'%'", "'@'", "'+'", "'-'", "'<<'", "'>>'",
                                                    "'<'",  "'<='", "'>'", "'>='", "'=='", "'!='", "'&'",
                                                    "'^'",  "'|'",  "'&&'", "'||'", "'?'"};
    static const std::set<std::string> assignOps = {"'='",  "'+='", "'-='", "'*='", "'/='",  "'%='",
                                                    "'&='", "'|='", "'^='", "'<<='", "'>>='"};
    std::vector<size_t> tokens;
    for (ssize_t t : set.toList())
        if (!found || static_cast<size_t>(t) != found->getType()) tokens.push_back(static_cast<size_t>(t));
    auto countIn = [&](const std::set<std::string>& group) {
        return std::count_if(tokens.begin(), tokens.end(), [&](size_t t) { return group.count(vocab.getLiteralName(t)) > 0; });
    };
    const bool operators = countIn(binaryOps) >= 3, assignments = countIn(assignOps) >= 3;
    bool wantsExpr = std::count_if(tokens.begin(), tokens.end(),
                                   [](size_t t) { return exprStart.count(t) > 0; }) >= 3;
    std::vector<std::string> names;
    if (wantsExpr) names.push_back("an expression");
    for (size_t t : tokens) {
        if (wantsExpr && (exprStart.count(t) || vocab.getLiteralName(t) == "'('" ||
                          vocab.getLiteralName(t) == "'['" || vocab.getLiteralName(t) == "'-'" ||
                          vocab.getLiteralName(t) == "'!'" || vocab.getLiteralName(t) == "'~'"))
            continue;
        if ((operators && binaryOps.count(vocab.getLiteralName(t))) ||
            (assignments && assignOps.count(vocab.getLiteralName(t))))
            continue;
        if (t == antlr4::Token::EOF) names.push_back("end of file");
        else if (t == TLLexer::ID) names.push_back("an identifier");
        else if (t == TLLexer::INT) names.push_back("an integer");
        else if (t == TLLexer::FLOAT) names.push_back("a number");
        else if (t == TLLexer::STRING) names.push_back("a string");
        else if (!vocab.getLiteralName(t).empty()) names.push_back(vocab.getLiteralName(t));
    }
    if (operators) names.push_back("an operator");
    if (assignments) names.push_back("an assignment");
    if (names.empty()) return "something else";
    if (names.size() > 8) {
        names.resize(8);
        names.push_back("...");
    }
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
        if (i > 0) out += (i + 1 == names.size() && names[i] != "...") ? " or " : ", ";
        out += names[i];
    }
    return out;
}

// The tokens that could have come where a prediction failed. ANTLR's expected set for a
// NoViableAltException is the one at the start of the decision (what may start a statement:
// '{' among them), while the offending token may lie further on (`until (x) {`: the '{' after
// an expression statement). The configurations the prediction still had just before the
// offending token (its dead end) say what could come there: the tokens their states match.
// Empty when there are none to read (an LL(1) failure has no dead-end configurations).
antlr4::misc::IntervalSet expectedAtDeadEnd(const antlr4::NoViableAltException& e) {
    antlr4::misc::IntervalSet out;
    const antlr4::atn::ATNConfigSet* configs = e.getDeadEndConfigs();
    if (!configs) return out;
    for (const auto& c : configs->configs)
        for (const antlr4::atn::Transition* t : c->state->transitions) {
            if (t->isEpsilon()) continue;
            auto type = t->getSerializationType();
            if (type == antlr4::atn::Transition::NOT_SET || type == antlr4::atn::Transition::WILDCARD) continue;
            out.addAll(t->label());
        }
    return out;
}

struct TooManyErrors {};

// The byte offset of the first `/*` that is never closed, or npos. The lexer would find it too,
// but only by scanning to the end of the file from every `/*` after it as well: on input like
// "/* /* /* ..." that is quadratic. This scan mirrors the lexer's rules for strings and
// comments (see grammar/TL.g4) and is linear.
size_t findUnterminatedComment(const std::string& text) {
    const size_t n = text.size();
    size_t i = 0;
    while (i < n) {
        char c = text[i];
        if (c == '/' && i + 1 < n && text[i + 1] == '/') {  // LINE_COMMENT: up to \r or \n
            i += 2;
            while (i < n && text[i] != '\n' && text[i] != '\r') ++i;
        } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {  // BLOCK_COMMENT
            size_t close = text.find("*/", i + 2);
            if (close == std::string::npos) return i;
            i = close + 2;
        } else if (c == '"') {  // STRING or UNTERMINATED_STRING: ends at '"' or a line break
            ++i;
            while (i < n && text[i] != '"' && text[i] != '\n' && text[i] != '\r') i += text[i] == '\\' ? 2 : 1;
            if (i < n && text[i] == '"') ++i;
        } else {
            ++i;
        }
    }
    return std::string::npos;
}

// ANTLR's default recovery, with messages written for people and a bound on how many it makes.
class TlErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
    TlErrorStrategy(DiagnosticEngine& diags, unsigned maxErrors) : diags_(diags), maxErrors_(maxErrors) {}

protected:
    void reportNoViableAlternative(antlr4::Parser* p, const antlr4::NoViableAltException& e) override {
        const antlr4::Token* t = e.getOffendingToken();
        antlr4::misc::IntervalSet expected = expectedAtDeadEnd(e);
        if (expected.isEmpty()) expected = p->getExpectedTokens();
        emit(DiagId::err_unexpected_token, t, describeToken(t), describeExpected(expected, p->getVocabulary(), t));
    }
    void reportInputMismatch(antlr4::Parser* p, const antlr4::InputMismatchException& e) override {
        const antlr4::Token* t = e.getOffendingToken();
        emit(DiagId::err_unexpected_token, t, describeToken(t),
             describeExpected(e.getExpectedTokens(), p->getVocabulary(), t));
    }
    void reportFailedPredicate(antlr4::Parser* p, const antlr4::FailedPredicateException& e) override {
        const antlr4::Token* t = e.getOffendingToken();
        emit(DiagId::err_unexpected_token, t, describeToken(t),
             describeExpected(p->getExpectedTokens(), p->getVocabulary(), t));
    }
    void reportUnwantedToken(antlr4::Parser* p) override {
        if (inErrorRecoveryMode(p)) return;
        beginErrorCondition(p);
        const antlr4::Token* t = p->getCurrentToken();
        emitRange(DiagId::err_unexpected_token, rangeOf(t), describeToken(t),
                  describeExpected(getExpectedTokens(p), p->getVocabulary(), t));
    }
    void reportMissingToken(antlr4::Parser* p) override {
        if (inErrorRecoveryMode(p)) return;
        beginErrorCondition(p);
        const antlr4::Token* t = p->getCurrentToken();
        emitRange(DiagId::err_missing_token, rangeOf(t),
                  describeExpected(getExpectedTokens(p), p->getVocabulary(), t), describeToken(t));
    }

private:
    template <typename... Args> void emit(DiagId id, const antlr4::Token* t, const Args&... args) {
        emitRange(id, rangeOf(t), args...);
    }
    template <typename... Args> void emitRange(DiagId id, SourceRange r, const Args&... args) {
        diags_.report(id, r, args...);
        if (++count_ >= maxErrors_) throw TooManyErrors{};
    }

    DiagnosticEngine& diags_;
    unsigned maxErrors_;
    unsigned count_ = 0;
};

// What screenTokens needs to know about a token type; literal tokens ('(' ...) are looked up
// once by their spelling in the vocabulary instead of comparing every token's text.
enum class TokenClass : uint8_t { Other, Open, Close, OpenBrace, CloseBrace, Semicolon };

std::vector<TokenClass> classifyTokenTypes(const antlr4::dfa::Vocabulary& vocab) {
    std::vector<TokenClass> classes(vocab.getMaxTokenType() + 1, TokenClass::Other);
    for (size_t t = 0; t < classes.size(); ++t) {
        std::string name = vocab.getLiteralName(t);
        if (name == "'('" || name == "'['") classes[t] = TokenClass::Open;
        else if (name == "')'" || name == "']'") classes[t] = TokenClass::Close;
        else if (name == "'{'") classes[t] = TokenClass::OpenBrace;
        else if (name == "'}'") classes[t] = TokenClass::CloseBrace;
        else if (name == "';'") classes[t] = TokenClass::Semicolon;
    }
    return classes;
}

// Errors that are visible in the token stream alone. Returns false when parsing must not start.
// Also records the indices of the `kernel` tokens outside any bracket: where kernels start.
bool screenTokens(antlr4::CommonTokenStream& tokens, const antlr4::dfa::Vocabulary& vocab, DiagnosticEngine& diags,
                  const ParseLimits& limits, std::vector<size_t>& kernelStarts) {
    static const std::vector<TokenClass> classes = classifyTokenTypes(vocab);
    bool ok = true;
    unsigned depth = 0;
    unsigned statementTokens = 0;
    unsigned reported = 0;
    for (antlr4::Token* t : tokens.getTokens()) {
        if (reported >= limits.maxSyntaxErrors) break;
        size_t type = t->getType();
        switch (type) {
        case TLLexer::BAD_CHAR: {
            std::string text = t->getText();
            unsigned char c = text.empty() ? 0 : static_cast<unsigned char>(text[0]);
            std::string shown = c < 0x20 || c == 0x7f ? fmt::format("'\\x{:02x}'", c) : "'" + text + "'";
            diags.report(DiagId::err_invalid_character, rangeOf(t), shown);
            ok = false;
            ++reported;
            break;
        }
        case TLLexer::UNTERMINATED_STRING:
            diags.report(DiagId::err_unterminated_string, rangeOf(t));
            ok = false;
            ++reported;
            break;
        case TLLexer::UNTERMINATED_COMMENT_START:
            // Everything after it is comment text: stop looking.
            diags.report(DiagId::err_unterminated_comment, rangeOf(t));
            return false;
        default: break;
        }
        if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL || type == antlr4::Token::EOF) continue;
        if (type == TLLexer::KERNEL && depth == 0) kernelStarts.push_back(t->getTokenIndex());
        TokenClass cls = type < classes.size() ? classes[type] : TokenClass::Other;
        if (cls == TokenClass::Open || cls == TokenClass::OpenBrace) {
            if (++depth > limits.maxNesting) {
                diags.report(DiagId::err_nesting_too_deep, rangeOf(t), limits.maxNesting);
                return false;
            }
        } else if (cls == TokenClass::Close || cls == TokenClass::CloseBrace) {
            if (depth > 0) --depth;
        }
        // ';', '{' and '}' end a statement: the token count that bounds parser look-ahead restarts.
        if (cls == TokenClass::Semicolon || cls == TokenClass::OpenBrace || cls == TokenClass::CloseBrace) {
            statementTokens = 0;
        } else if (++statementTokens > limits.maxTokensPerStatement) {
            diags.report(DiagId::err_statement_too_long, rangeOf(t), limits.maxTokensPerStatement);
            return false;
        }
    }
    return ok;
}

// Hands out copies of tokens [begin, end) of an already lexed file, then an end-of-file token.
// That token sits where the next token (the `kernel` of the next group, or the real end) is,
// so that an error at the end of a group points at the right place.
class SliceTokenSource : public antlr4::TokenSource {
public:
    SliceTokenSource(const std::vector<antlr4::Token*>& tokens, size_t begin, size_t end, antlr4::TokenSource* origin)
        : tokens_(tokens), next_(begin), end_(end), origin_(origin) {}

    std::unique_ptr<antlr4::Token> nextToken() override {
        if (next_ < end_) return std::make_unique<antlr4::CommonToken>(tokens_[next_++]);
        auto eof = std::make_unique<antlr4::CommonToken>(tokens_[end_]);
        eof->setType(antlr4::Token::EOF);
        eof->setChannel(antlr4::Token::DEFAULT_CHANNEL);
        return eof;
    }
    size_t getLine() const override { return tokens_[std::min(next_, end_)]->getLine(); }
    size_t getCharPositionInLine() override { return tokens_[std::min(next_, end_)]->getCharPositionInLine(); }
    antlr4::CharStream* getInputStream() override { return origin_->getInputStream(); }
    std::string getSourceName() override { return origin_->getSourceName(); }
    antlr4::TokenFactory<antlr4::CommonToken>* getTokenFactory() override {
        return antlr4::CommonTokenFactory::DEFAULT.get();
    }

private:
    const std::vector<antlr4::Token*>& tokens_;
    size_t next_, end_;
    antlr4::TokenSource* origin_;
};

// A group's parse: its tree (null after an error, which is reported), or `rejected` where stage 1
// failed and the caller asked for no recovery (nothing reported).
struct GroupParse {
    std::unique_ptr<ast::File> file;
    bool rejected = false;
};

// Parses tokens [begin, end) as a file (`kernel* EOF`): SLL prediction with bail-out first;
// full LL with error recovery only if that fails and `recover` asks for it.
GroupParse parseGroup(const std::vector<antlr4::Token*>& all, size_t begin, size_t end, antlr4::TokenSource* origin,
                      DiagnosticEngine& diags, const std::shared_ptr<antlr4::ANTLRErrorStrategy>& recovery,
                      bool recover) {
    SliceTokenSource source(all, begin, end, origin);
    antlr4::CommonTokenStream tokens(&source);
    TLParser parser(&tokens);
    parser.removeErrorListeners();
    TLParser::FileContext* tree = nullptr;
    // Stage 1: SLL prediction, bail at the first error. Almost every valid file parses here.
    parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::SLL);
    try {
        tree = parser.file();
    } catch (const antlr4::ParseCancellationException&) {
        tree = nullptr;
    }
    if (!tree && !recover) return {nullptr, true};
    if (!tree) {
        // Stage 2: full LL with recovery, so that every syntax error is reported once.
        tokens.seek(0);
        parser.reset();
        parser.setErrorHandler(recovery);
        recovery->reset(&parser);  // it is shared by the groups (for the error count): a clean state
        parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::LL);
        unsigned errorsBefore = diags.errorCount();
        try {
            tree = parser.file();
        } catch (const TooManyErrors&) {
            diags.report(DiagId::err_too_many_errors, rangeOf(parser.getCurrentToken()));
            throw;
        }
        if (diags.errorCount() > errorsBefore || !tree) return {};
    }
    return {parser::buildAST(tree, diags)};
}

} // namespace

std::unique_ptr<ast::File> parseFile(const SourceFile& file, DiagnosticEngine& diags, const ParseLimits& limits) {
    const std::string& text = file.text();
    if (text.size() > limits.maxBytes) {
        diags.report(DiagId::err_input_too_large, SourceRange{SourceLoc{1, 1}}, text.size(), limits.maxBytes);
        return nullptr;
    }
    if (size_t bad = firstInvalidUtf8(text); bad != std::string::npos) {
        diags.report(DiagId::err_invalid_utf8, SourceRange{locationOfOffset(text, bad)});
        return nullptr;
    }

    // Lex only up to an unterminated comment (and its "/*", which the lexer reports): what follows
    // is comment text, and lexing it is what would be slow.
    size_t unterminated = findUnterminatedComment(text);
    antlr4::ANTLRInputStream input(unterminated == std::string::npos ? text : text.substr(0, unterminated + 2));
    TLLexer lexer(&input);
    lexer.removeErrorListeners();
    antlr4::CommonTokenStream tokens(&lexer);
    tokens.fill();
    std::vector<size_t> kernelStarts;
    if (!screenTokens(tokens, lexer.getVocabulary(), diags, limits, kernelStarts)) return nullptr;

    // The file is parsed in groups of whole kernels (cut at `kernel` tokens outside brackets, at
    // least limits.groupTokens tokens each): the parse tree of one group is freed before the next is
    // built, and a syntax error sends only its own group through the slow, recovering parse.
    // `kernel* EOF` accepts a file exactly when it accepts each group, and a file of a few
    // kernels is one group.
    const std::vector<antlr4::Token*>& all = tokens.getTokens();
    const size_t eofIndex = all.size() - 1;  // fill() ends the list with EOF
    std::vector<size_t> cuts{0};
    for (size_t start : kernelStarts)
        if (start > cuts.back() && start - cuts.back() >= std::max(1u, limits.groupTokens)) cuts.push_back(start);
    cuts.push_back(eofIndex);

    // A group with a syntax error is parsed again a kernel at a time, so that what is reported
    // (its syntax errors, and the AST builder's errors in the kernels around them) does not depend
    // on where the groups were cut.
    auto recovery = std::make_shared<TlErrorStrategy>(diags, limits.maxSyntaxErrors);
    auto result = std::make_unique<ast::File>();
    bool syntaxErrors = false;
    for (size_t g = 0; g + 1 < cuts.size(); ++g) {
        std::vector<GroupParse> parts;
        try {
            parts.push_back(parseGroup(all, cuts[g], cuts[g + 1], &lexer, diags, recovery, /*recover=*/false));
            if (parts.back().rejected) {
                parts.clear();
                std::vector<size_t> kernels{cuts[g]};
                for (size_t start : kernelStarts)
                    if (start > kernels.back() && start < cuts[g + 1]) kernels.push_back(start);
                kernels.push_back(cuts[g + 1]);
                for (size_t k = 0; k + 1 < kernels.size(); ++k)
                    parts.push_back(parseGroup(all, kernels[k], kernels[k + 1], &lexer, diags, recovery, true));
            }
        } catch (const TooManyErrors&) {
            return nullptr;  // reported
        }
        for (GroupParse& part : parts) {
            if (!part.file) {
                syntaxErrors = true;
                continue;
            }
            if (!syntaxErrors) {
                for (auto& i : part.file->imports) result->imports.push_back(std::move(i));
                for (auto& k : part.file->kernels) result->kernels.push_back(std::move(k));
            }
        }
    }
    if (syntaxErrors) return nullptr;
    if (result->kernels.empty()) {
        diags.report(DiagId::err_no_kernel, SourceRange{SourceLoc{1, 1}});
        return nullptr;
    }
    // Errors reported so far left the tree whole (ASTBuilder.h): sema checks it too.
    return result;
}

} // namespace tlc
