// The .tl tile language. docs/language.md describes it for users; this file is the
// authoritative syntax. Only src/parser/ASTBuilder.cpp sees the generated parser.
grammar TL;

file : (importDecl | kernel)* EOF ;

kernel
    : KERNEL name=ID templateParams? '(' (param (',' param)* ','?)? ')' block
    ;

// Defaults are restricted to a primary expression so that '>' closes the list
// unambiguously; write (a * b) for a computed default.
templateParams : '<' (templateParam (',' templateParam)* ','?)? '>' ;
templateParam  : name=ID (':' ty=ID)? '=' templateDefault ;
templateDefault
    : AUTO                          # AutoDefault
    | '-'? primary                  # ValueDefault
    ;

param      : name=ID ':' typeExpr ;
typeExpr   : dtype=ID ('[' exprList ']' (STRIDES '[' exprList ']')?)? ;

block : '{' stmt* '}' ;

stmt
    : LET name=ID '=' expr ';'                                      # LetStmt
    | VAR name=ID (':' ty=ID)? ('=' expr)? ';'                      # VarStmt
    | target=expr op=('=' | '+=' | '-=' | '*=' | '/=' | '%=' | '&=' | '|=' | '^=' | '<<=' | '>>=') value=expr ';'  # AssignStmt
    | FOR loopVars IN iter=ID '(' argList? ')' block                 # ForStmt
    | ifStmt                                                         # IfStatement
    | WHILE cond=expr block                                          # WhileStmt
    | GRID '(' argList? ')' AS gridVars block                       # GridStmt
    | REQUIRE cond=expr ';'                                          # RequireStmt
    | block                                                          # BlockStmt
    | expr ';'                                                       # ExprStmt
    | ';'                                                            # EmptyStmt
    ;

// `if (c)` and `if c` both parse: the parentheses are an ordinary ParenExpr.
ifStmt : IF cond=expr thenBlock=block (ELSE (elseIf=ifStmt | elseBlock=block))? ;

// Several variables go in parentheses; the bare list `for i, j in ...` (Python's and TileLang's
// habit) parses too, so that the AST builder can say what to write and checking goes on.
loopVars : ID | '(' ID (',' ID)* ')' | ID (',' ID)+ ;
gridVars : ID | '(' ID (',' ID)* ')' | ID (',' ID)+ ;

expr
    : primary                                                 # PrimaryExpr
    | base=expr '[' indexList ']'                             # IndexExpr
    | op=('-' | '!' | '~') expr                               # UnaryExpr
    | expr op=('*' | '/' | '%' | '@') expr                    # MulExpr
    | expr op=('+' | '-') expr                                # AddExpr
    | expr op=('<<' | '>>') expr                              # ShiftExpr
    | expr op=('<' | '<=' | '>' | '>=') expr                  # RelExpr
    | expr op=('==' | '!=') expr                              # EqExpr
    | expr '&' expr                                           # BitAndExpr
    | expr '^' expr                                           # BitXorExpr
    | expr '|' expr                                           # BitOrExpr
    | expr '&&' expr                                          # AndExpr
    | expr '||' expr                                          # OrExpr
    | <assoc = right> expr '?' expr ':' expr                  # TernaryExpr
    ;

primary
    : INT                                   # IntLit
    | FLOAT                                 # FloatLit
    | (TRUE | FALSE)                        # BoolLit
    | STRING                                # StringLit
    | ID                                    # NameRef
    | '(' expr ')'                          # ParenExpr
    | '(' expr ',' exprList? ')'            # TupleExpr
    | '[' exprList? ']'                     # ListExpr
    | callee=ID '(' argList? ')'            # PrimaryCall
    | AUTO                                  # AutoExpr
    ;

exprList  : expr (',' expr)* ','? ;
argList   : arg (',' arg)* ','? ;
arg       : (key=ID '=')? expr ;

indexList : index (',' index)* ;
index
    : expr                                  # PointIndex
    | lo=expr? ':' '+' len=expr             # LengthSlice
    | lo=expr? ':' hi=expr?                 # RangeSlice
    ;

// `import "my_helpers.cuh";`: a header of device functions that call_extern names, included
// by the output as written (docs/language.md, "The expert level"). Defined last so that the
// implicit tokens keep their numbers (expected-token lists follow them).
importDecl : IMPORT path=STRING ';' ;

KERNEL  : 'kernel' ;
IMPORT  : 'import' ;
LET     : 'let' ;
VAR     : 'var' ;
FOR     : 'for' ;
IN      : 'in' ;
IF      : 'if' ;
ELSE    : 'else' ;
WHILE   : 'while' ;
GRID    : 'grid' ;
AS      : 'as' ;
AUTO    : 'auto' ;
TRUE    : 'true' ;
FALSE   : 'false' ;
STRIDES : 'strides' ;
REQUIRE : 'require' ;

ID      : [a-zA-Z_] [a-zA-Z_0-9]* ;
FLOAT   : DIGITS '.' DIGITS? EXPONENT? | '.' DIGITS EXPONENT? | DIGITS EXPONENT ;
INT     : DIGITS | '0' [xX] [0-9a-fA-F_]+ ;
STRING  : '"' (~["\\\r\n] | '\\' .)* '"' ;

fragment DIGITS   : [0-9] [0-9_]* ;
fragment EXPONENT : [eE] [+-]? [0-9]+ ;

LINE_COMMENT  : '//' ~[\r\n]* -> channel(HIDDEN) ;
BLOCK_COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;
WS            : [ \t\r\n\f]+ -> skip ;

// Catch-alls so that lexing never fails: the AST builder reports these.
UNTERMINATED_STRING : '"' (~["\\\r\n] | '\\' .)* ;
UNTERMINATED_COMMENT_START : '/*' ;
BAD_CHAR : . ;
