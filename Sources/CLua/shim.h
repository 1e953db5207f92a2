// CLua: Debian's liblua5.4 (apt liblua5.4-dev) plus the small C shim that every
// Swift-implemented Lua function and every limit goes through.
//
// Why a shim: Lua raises errors with longjmp. A longjmp that unwinds a Swift frame is
// undefined behaviour, so Swift never calls an API that can raise. Instead:
//   * Swift functions are called by one C trampoline (hs_trampoline). The Swift body
//     only reads its arguments (non-raising API) and describes its results as a list
//     of push operations (hs_op); after Swift has returned, C performs the pushes
//     (which may allocate and so raise) and raises the error value if Swift threw.
//   * Everything else that can raise (opening libraries, building tables, calling Lua)
//     runs under lua_pcall from C helpers below.
//   * Limits: a capped allocator (hs_alloc) and a count hook (hs_hook). In Lua 5.4 an
//     active count hook makes the VM trace every instruction (about 2x slower), so
//     the hook is off unless needed: it runs with an interval only when an exact
//     instruction cap is set, and is otherwise armed on demand — by the allocator
//     when memory runs out, by the trampoline when the host stops the run, and by a
//     signal (hs_interrupt) sent to the Lua thread when the deadline passes. Once
//     any limit is hit the hook fires on every instruction and raises, so pcall
//     cannot swallow the stop.
// All symbols are static inline (a system library target cannot hold .c files) and
// prefixed hs_.
#ifndef HUBSCRIPT_CLUA_SHIM_H
#define HUBSCRIPT_CLUA_SHIM_H

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <signal.h>
#include <pthread.h>

#if LUA_VERSION_NUM != 504
#error "hubscript needs Lua 5.4 (apt liblua5.4-dev)"
#endif

// MARK: - Run context

enum {
    HS_LIMIT_NONE = 0,
    HS_LIMIT_MEMORY = 1,
    HS_LIMIT_INSTRUCTIONS = 2,
    HS_LIMIT_DEADLINE = 3,
    HS_LIMIT_HOST = 4,   // the host asked the run to stop (e.g. a write limit)
};

// One push operation, executed by C after the Swift body returned.
enum {
    HS_OP_NIL = 0,       // push nil
    HS_OP_BOOL = 1,      // push boolean i
    HS_OP_INT = 2,       // push integer i
    HS_OP_NUM = 3,       // push float d
    HS_OP_STR = 4,       // push string s[0..<len]
    HS_OP_TABLE = 5,     // push a new table presized (i array slots, len hash slots)
    HS_OP_SETFIELD = 6,  // stack: …, table, key, value -> …, table (raw)
    HS_OP_SETINDEX = 7,  // stack: …, table, value -> …, table; table[i] = value (raw)
    HS_OP_FUNC = 8,      // push a Swift function: trampoline closure with upvalue i (its id)
    HS_OP_REF = 9,       // push registry[i]
    HS_OP_SETMETA = 10,  // stack: …, table -> …, table; setmetatable(table, registry[i])
    HS_OP_HANDLE = 11,   // stack: …, label -> …, handle; a new opaque handle with id i
};

// How deep binding calls may nest: a call nests inside another only from a `__gc`
// finalizer that Lua runs while C pushes the outer call's results.
enum { HS_MAX_CALL_DEPTH = 8 };

typedef struct hs_op {
    int32_t kind;
    lua_Integer i;
    double d;
    const char *s;
    size_t len;
} hs_op;

// What the Swift entry point returns when its one result is a scalar it left in the
// context (`direct_kind`: HS_OP_NIL, HS_OP_BOOL, HS_OP_INT or HS_OP_NUM, with
// `direct_i` / `direct_d`) instead of in result ops: the commonest results skip the ops
// (the binding call's cost in scripts/bench-runtime).
enum { HS_DIRECT_RESULT = -2 };

// The Swift entry point. Returns the number of results (>= 0) the result ops leave on
// the stack, HS_DIRECT_RESULT (above), or -1 when the ops build an error value that
// must be raised. It must
// leave the Lua stack as it found it and must not call any API that can raise.
// `depth` is the call's nesting level (0 unless called from a finalizer while an
// outer call's results are being pushed): the Swift side keeps one result buffer per
// level, so the ops of a call are owned by that call until C has performed them.
typedef int (*hs_entry_fn)(lua_State *L, void *host, int id, int depth);

// Called by the message handler for a table error value that ends a protected call
// (level 0 is the handler, level 1 the function that raised it): the host reads the
// stack with lua_getstack/lua_getinfo only — which neither allocate nor raise — to
// remember where the recipe raised it. The table itself is left as it is.
typedef void (*hs_raise_fn)(lua_State *L, void *host);

typedef struct hs_ctx {
    // memory
    size_t mem_used;
    size_t mem_peak;
    size_t mem_cap;        // 0 = no cap
    size_t mem_grace;      // extra room once a limit is hit, so unwinding can allocate
    // instructions and time
    long long instructions;      // executed, counted in hook intervals
    long long instruction_cap;   // 0 = no cap
    int hook_interval;
    double deadline;             // CLOCK_MONOTONIC seconds; 0 = none
    // which limit stopped the run (HS_LIMIT_*); sticky for the life of the state.
    // Written by the watchdog thread too, hence volatile.
    volatile int limit_hit;
    // the thread (main state or coroutine) now running Lua code, for arming the hook
    lua_State *volatile running;
    // caps on what one C call may build (string.rep, string.format, table.concat)
    size_t build_cap;
    // Swift side
    hs_entry_fn entry;
    void *host;
    const hs_op *ops;
    int nops;
    int stack_need;        // stack slots the ops need at most (set with ops)
    // binding calls in progress (see hs_entry_fn); reset by each top-level call
    int call_depth;
    // set once the recipe has ended (lua_close runs the last finalizers): from then
    // on, and after any limit, no binding runs.
    int closed;
    // registry reference of the opaque handles' metatable (see hs_make_handle_meta);
    // 0 until made
    int handle_meta;
    // the message handler's call for a table error value (see hs_raise_fn); NULL: none
    hs_raise_fn on_table_error;
    // a scalar result returned as HS_DIRECT_RESULT (see above)
    int direct_kind;
    lua_Integer direct_i;
    double direct_d;
} hs_ctx;

static inline hs_ctx *hs_getctx(lua_State *L) {
    return *(hs_ctx **)lua_getextraspace(L);
}

static inline double hs_monotonic_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// MARK: - Allocator with a cap

// lua_Alloc with a cap: refuses growth past mem_cap (Lua turns that into a memory
// error) and marks the memory limit as hit, which the hook then makes uncatchable.
static inline void hs_hook(lua_State *L, lua_Debug *ar);

// Makes the hook fire at the next instruction of the running thread.
static inline void hs_arm(hs_ctx *ctx) {
    lua_State *L = ctx->running;
    if (L != NULL) lua_sethook(L, hs_hook, LUA_MASKCOUNT, 1);
}

static inline void *hs_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    hs_ctx *ctx = (hs_ctx *)ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        ctx->mem_used -= old;
        return NULL;
    }
    if (ctx->mem_cap != 0 && nsize > old) {
        size_t limit = ctx->mem_cap + (ctx->limit_hit ? ctx->mem_grace : 0);
        size_t grow = nsize - old;
        if (ctx->mem_used > limit || grow > limit - ctx->mem_used) {
            if (!ctx->limit_hit) ctx->limit_hit = HS_LIMIT_MEMORY;
            hs_arm(ctx);
            return NULL;
        }
    }
    void *p = realloc(ptr, nsize);
    if (p == NULL) {
        if (!ctx->limit_hit) ctx->limit_hit = HS_LIMIT_MEMORY;
        hs_arm(ctx);
        return NULL;
    }
    ctx->mem_used = ctx->mem_used - old + nsize;
    if (ctx->mem_used > ctx->mem_peak) ctx->mem_peak = ctx->mem_used;
    return p;
}

// MARK: - Budget hook

// Raises the stop error. Called only from the hook, the trampoline and the coroutine
// wrappers (Lua contexts), never from Swift. It is raised as a memory error (lua_error
// with Lua's own "not enough memory" string throws LUA_ERRMEM): Lua runs no message
// handler for those, so an xpcall handler cannot run (or loop) inside the hook, where
// hooks are off.
static inline int hs_raise_stop(lua_State *L) {
    // From now on fire on every instruction of this thread: pcall and error
    // handlers get at most one instruction before the stop is raised again.
    lua_sethook(L, hs_hook, LUA_MASKCOUNT, 1);
    lua_pushliteral(L, "not enough memory");   // interned already: no allocation
    return lua_error(L);
}

// Count hook. Counting mode (an instruction cap is set): adds the interval and checks
// the cap and the deadline. Armed mode (count 1): raises if a limit was hit, else
// goes back to counting or off. Once a limit is hit it raises on every call.
static inline void hs_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    hs_ctx *ctx = hs_getctx(L);
    if (ctx->limit_hit == HS_LIMIT_NONE) {
        if (lua_gethookcount(L) > 1) ctx->instructions += lua_gethookcount(L);
        if (ctx->instruction_cap != 0 && ctx->instructions > ctx->instruction_cap) {
            ctx->limit_hit = HS_LIMIT_INSTRUCTIONS;
        } else if (ctx->deadline != 0 && hs_monotonic_now() > ctx->deadline) {
            ctx->limit_hit = HS_LIMIT_DEADLINE;
        } else {
            if (ctx->instruction_cap != 0) lua_sethook(L, hs_hook, LUA_MASKCOUNT, ctx->hook_interval);
            else lua_sethook(L, NULL, 0, 0);
            return;
        }
    }
    hs_raise_stop(L);
}

// MARK: - Interrupts from the watchdog thread

#define HS_INTERRUPT_SIGNAL (SIGRTMIN + 3)

// The run on this thread, for the signal handler (NULL between runs). A function-
// local static, so Swift's importer emits it with the function.
static inline hs_ctx *volatile *hs_thread_slot(void) {
    static __thread hs_ctx *volatile slot;
    return &slot;
}

// On the Lua thread: arms the hook of the running Lua thread. lua_sethook is safe
// to call from a signal handler (ldebug.c; lua.c's SIGINT handler does the same).
static inline void hs_signal_handler(int sig) {
    (void)sig;
    hs_ctx *ctx = *hs_thread_slot();
    if (ctx != NULL) hs_arm(ctx);
}

// Installs the interrupt handler once per process (SA_RESTART: interrupted system
// calls of bindings resume). Returns 0 on success.
static inline int hs_install_interrupt_handler(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = hs_signal_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(HS_INTERRUPT_SIGNAL, &sa, NULL);
}

// Marks this thread as running ctx's state (NULL when the run ends). Binding also
// unblocks the interrupt signal on this thread: a thread that blocks signals (every
// libdispatch worker thread blocks them all) would otherwise keep the interrupt
// pending for ever and the run would never stop at its deadline. The signal stays
// unblocked after the run; without a bound state the handler does nothing.
static inline void hs_bind_thread(hs_ctx *ctx) {
    if (ctx != NULL) {
        sigset_t interrupt;
        sigemptyset(&interrupt);
        sigaddset(&interrupt, HS_INTERRUPT_SIGNAL);
        pthread_sigmask(SIG_UNBLOCK, &interrupt, NULL);
    }
    *hs_thread_slot() = ctx;
}

static inline pthread_t hs_self(void) { return pthread_self(); }

// From any thread: stops the run with `limit` (if no limit was hit yet) and
// interrupts the Lua thread so its hook fires at the next instruction.
static inline void hs_interrupt(hs_ctx *ctx, pthread_t lua_thread, int limit) {
    if (ctx->limit_hit == HS_LIMIT_NONE) ctx->limit_hit = limit;
    pthread_kill(lua_thread, HS_INTERRUPT_SIGNAL);
}

// MARK: - Result ops and the trampoline

// Performs the push operations. Runs in a Lua context (may raise, but only for memory:
// the caller has reserved the stack they need).
static inline void hs_run_ops(lua_State *L, const hs_op *ops, int nops);

static inline int hs_trampoline(lua_State *L) {
    hs_ctx *ctx = hs_getctx(L);
    // After a limit no binding runs, wherever Lua code still runs (a __close handler,
    // a finalizer): the stop is raised again instead.
    if (ctx->limit_hit) return hs_raise_stop(L);
    if (ctx->closed)
        return luaL_error(L, "bindings cannot be called after the recipe has ended (from a __gc finalizer)");
    int depth = ctx->call_depth;
    if (depth >= HS_MAX_CALL_DEPTH)
        return luaL_error(L, "bindings nested %d deep: a __gc finalizer called bindings while another binding's results were built", depth);
    // The id is a light userdata: reading it is a type check, not a number conversion.
    int id = (int)(intptr_t)lua_touserdata(L, lua_upvalueindex(1));
    int status = ctx->entry(L, ctx->host, id, depth);
    if (status == HS_DIRECT_RESULT) {
        // One scalar: pushing it needs one slot of the LUA_MINSTACK a C function has,
        // and cannot raise.
        if (ctx->limit_hit) hs_arm(ctx);
        switch (ctx->direct_kind) {
        case HS_OP_INT: lua_pushinteger(L, ctx->direct_i); break;
        case HS_OP_NUM: lua_pushnumber(L, ctx->direct_d); break;
        case HS_OP_BOOL: lua_pushboolean(L, ctx->direct_i != 0); break;
        default: lua_pushnil(L); break;
        }
        return 1;
    }
    const hs_op *ops = ctx->ops;
    int nops = ctx->nops;
    int need = ctx->stack_need;
    ctx->ops = NULL;
    ctx->nops = 0;
    // A C function starts with LUA_MINSTACK free slots; reserve more before the ops
    // are lent to C, so performing them can fail only for memory (which ends the run).
    // Raising here is safe: the ops are not in use yet.
    if (need > LUA_MINSTACK - 2 && !lua_checkstack(L, need + 2)) {
        if (ctx->limit_hit) return hs_raise_stop(L);
        return luaL_error(L, "stack overflow (a binding's results need %d stack slots)", need);
    }
    // The ops stay owned by this call while C performs them: a finalizer that runs
    // meanwhile and calls a binding gets the next level's buffer.
    ctx->call_depth = depth + 1;
    hs_run_ops(L, ops, nops);
    ctx->call_depth = depth;
    if (ctx->limit_hit) hs_arm(ctx);
    if (status < 0) {
        if (lua_type(L, -1) == LUA_TSTRING) {   // position of the Lua caller, as luaL_error does
            luaL_where(L, 1);
            lua_insert(L, -2);
            lua_concat(L, 2);
        }
        return lua_error(L);
    }
    return status;
}

static inline void hs_run_ops(lua_State *L, const hs_op *ops, int nops) {
    if (nops == 1 && ops[0].kind == HS_OP_INT) {   // the common case: one integer
        lua_pushinteger(L, ops[0].i);
        return;
    }
    for (int k = 0; k < nops; k++) {
        const hs_op *op = &ops[k];
        switch (op->kind) {
        case HS_OP_NIL: lua_pushnil(L); break;
        case HS_OP_BOOL: lua_pushboolean(L, op->i != 0); break;
        case HS_OP_INT: lua_pushinteger(L, op->i); break;
        case HS_OP_NUM: lua_pushnumber(L, op->d); break;
        case HS_OP_STR: lua_pushlstring(L, op->s, op->len); break;
        case HS_OP_TABLE: lua_createtable(L, (int)op->i, (int)op->len); break;
        case HS_OP_SETFIELD: lua_rawset(L, -3); break;
        case HS_OP_SETINDEX: lua_rawseti(L, -2, op->i); break;
        case HS_OP_FUNC:
            lua_pushlightuserdata(L, (void *)(intptr_t)op->i);
            lua_pushcclosure(L, hs_trampoline, 1);
            break;
        case HS_OP_REF: lua_rawgeti(L, LUA_REGISTRYINDEX, op->i); break;
        case HS_OP_SETMETA:
            lua_rawgeti(L, LUA_REGISTRYINDEX, op->i);
            lua_setmetatable(L, -2);
            break;
        case HS_OP_HANDLE: {
            lua_Integer id = op->i;
            void *u = lua_newuserdatauv(L, sizeof(lua_Integer), 1);   // …, label, handle
            memcpy(u, &id, sizeof id);
            lua_insert(L, -2);                                          // …, handle, label
            lua_setiuservalue(L, -2, 1);
            lua_rawgeti(L, LUA_REGISTRYINDEX, hs_getctx(L)->handle_meta);
            lua_setmetatable(L, -2);
            break;
        }
        default: break;   // ResultOps writes only the kinds above
        }
    }
}

// MARK: - Opaque handles

// Whether the value at idx is an opaque handle (a full userdata with the handles'
// metatable). Never raises.
static inline int hs_is_handle(lua_State *L, int idx) {
    hs_ctx *ctx = hs_getctx(L);
    if (ctx->handle_meta == 0 || lua_type(L, idx) != LUA_TUSERDATA || !lua_checkstack(L, 2)) return 0;
    idx = lua_absindex(L, idx);
    if (!lua_getmetatable(L, idx)) return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->handle_meta);
    int same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same;
}

// The id stored in the handle at idx (call only when hs_is_handle). Never raises.
static inline lua_Integer hs_handle_id(lua_State *L, int idx) {
    lua_Integer id;
    memcpy(&id, lua_touserdata(L, idx), sizeof id);
    return id;
}

// __tostring: "<label>" (e.g. "<secret dispatch/ci>").
static inline int hs_handle_tostring(lua_State *L) {
    lua_getiuservalue(L, 1, 1);
    lua_pushfstring(L, "<%s>", lua_tostring(L, -1));
    return 1;
}

// Every other metamethod: a handle has no text, length, fields, order or arithmetic.
// Upvalue 1 names what was attempted.
static inline int hs_handle_misuse(lua_State *L) {
    int h = hs_is_handle(L, 1) ? 1 : 2;
    lua_getiuservalue(L, h, 1);
    return luaL_error(L, "<%s> is an opaque handle: it cannot be %s; pass it only to a binding that takes it",
                      lua_tostring(L, -1), lua_tostring(L, lua_upvalueindex(1)));
}

static inline int hs_make_handle_meta_protected(lua_State *L) {
    static const char *const misuse[][2] = {
        {"__concat", "concatenated (..)"}, {"__len", "measured (#)"}, {"__eq", "compared (==)"},
        {"__lt", "compared (<)"}, {"__le", "compared (<=)"}, {"__index", "indexed"},
        {"__newindex", "assigned to"}, {"__call", "called"}, {"__unm", "used in arithmetic"},
        {"__add", "used in arithmetic"}, {"__sub", "used in arithmetic"}, {"__mul", "used in arithmetic"},
        {"__div", "used in arithmetic"}, {"__mod", "used in arithmetic"}, {"__pow", "used in arithmetic"},
        {"__idiv", "used in arithmetic"}, {"__band", "used in arithmetic"}, {"__bor", "used in arithmetic"},
        {"__bxor", "used in arithmetic"}, {"__shl", "used in arithmetic"}, {"__shr", "used in arithmetic"},
        {"__bnot", "used in arithmetic"}, {"__close", "closed"}, {NULL, NULL}};
    lua_createtable(L, 0, 26);
    for (int k = 0; misuse[k][0]; k++) {
        lua_pushstring(L, misuse[k][1]);
        lua_pushcclosure(L, hs_handle_misuse, 1);
        lua_setfield(L, -2, misuse[k][0]);
    }
    lua_pushcfunction(L, hs_handle_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "handle");
    lua_setfield(L, -2, "__name");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");   // getmetatable(handle) == false; setmetatable refused
    hs_getctx(L)->handle_meta = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

// Makes the handles' metatable (once per state). Returns a Lua status.
static inline int hs_make_handle_meta(lua_State *L) {
    if (!lua_checkstack(L, 6)) return LUA_ERRMEM;
    lua_pushcfunction(L, hs_make_handle_meta_protected);
    return lua_pcall(L, 0, 0, 0);
}

// MARK: - Sandboxed replacements of standard functions

static inline const char *hs_type_label(lua_State *L, int idx) {
    return lua_typename(L, lua_type(L, idx));
}

// tostring without addresses: values with __tostring or __name use them; functions
// show where they were defined; tables, threads and userdata show only their type.
// stack: … -> …, string
static inline const char *hs_safe_tolstring(lua_State *L, int idx, size_t *len) {
    idx = lua_absindex(L, idx);
    int t = lua_type(L, idx);
    if (t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TUSERDATA || t == LUA_TTHREAD
        || t == LUA_TLIGHTUSERDATA) {
        if (luaL_getmetafield(L, idx, "__tostring") != LUA_TNIL) {
            lua_pop(L, 1);
            return luaL_tolstring(L, idx, len);
        }
        int nt = luaL_getmetafield(L, idx, "__name");
        if (nt == LUA_TSTRING) return lua_tolstring(L, -1, len);
        if (nt != LUA_TNIL) lua_pop(L, 1);
        if (t == LUA_TFUNCTION) {
            lua_Debug ar;
            lua_pushvalue(L, idx);
            lua_getinfo(L, ">S", &ar);
            if (ar.what[0] == 'C' || ar.source[0] == '=') lua_pushliteral(L, "function: builtin");
            else lua_pushfstring(L, "function: %s:%d", ar.short_src, ar.linedefined);
            return lua_tolstring(L, -1, len);
        }
        if (t == LUA_TLIGHTUSERDATA && lua_touserdata(L, idx) == NULL) {
            lua_pushliteral(L, "null");
            return lua_tolstring(L, -1, len);
        }
        lua_pushstring(L, hs_type_label(L, idx));
        return lua_tolstring(L, -1, len);
    }
    return luaL_tolstring(L, idx, len);
}

static inline int hs_lua_tostring(lua_State *L) {
    luaL_checkany(L, 1);
    hs_safe_tolstring(L, 1, NULL);
    return 1;
}

// Raises "<fn> would build N bytes, over the M MiB cap on one string".
static inline int hs_build_cap_error(lua_State *L, const char *fn, double total, size_t cap) {
    char buf[160];
    snprintf(buf, sizeof buf, "%s would build %.0f bytes, over the %zu MiB cap on one string", fn, total, cap >> 20);
    return luaL_error(L, "%s", buf);
}

// string.rep with a cap on the size of the result.
static inline int hs_lua_string_rep(lua_State *L) {
    hs_ctx *ctx = hs_getctx(L);
    size_t l, lsep;
    luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &lsep);
    if (n > 0 && ctx->build_cap != 0) {
        double total = (double)l * (double)n + (double)lsep * (double)(n - 1);
        if (total > (double)ctx->build_cap)
            return hs_build_cap_error(L, "string.rep", total, ctx->build_cap);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

// Lua 5.4's checks of one conversion specification (lstrlib.c's checkformat): flags
// from `flags`, a width of at most two digits, and (when `precision`) a '.' and at most
// two digits, then the conversion letter.
static inline void hs_format_check_spec(lua_State *L, const char *form, const char *flags, int precision) {
    const char *spec = form + 1;
    spec += strspn(spec, flags);
    if (*spec != '0') {
        if (*spec >= '0' && *spec <= '9') { spec++; if (*spec >= '0' && *spec <= '9') spec++; }
        if (*spec == '.' && precision) {
            spec++;
            if (*spec >= '0' && *spec <= '9') { spec++; if (*spec >= '0' && *spec <= '9') spec++; }
        }
    }
    if (!((*spec >= 'a' && *spec <= 'z') || (*spec >= 'A' && *spec <= 'Z')))
        luaL_error(L, "invalid conversion specification: '%s'", form);
}

// string.format is Lua 5.4's own, with only what the sandbox needs to differ: a cap on
// the result, no '%p' (an address), no handle, and '%s' of a table, function,
// userdata or thread shows no address (hs_safe_tolstring). The wrapper walks the
// format as lstrlib's str_format does and raises, from its own frame (so the message
// names 'format' and the recipe's line, as Lua's does), every error Lua would raise,
// in the same order: "no value", an invalid or too long specification, an argument of
// the wrong type ('%q' of a table: "value has no literal form"). The original then
// formats, and only a limit can stop it.
static inline int hs_lua_string_format(lua_State *L) {
    hs_ctx *ctx = hs_getctx(L);
    size_t flen;
    const char *fmt = luaL_checklstring(L, 1, &flen);
    const char *end = fmt + flen;
    int top = lua_gettop(L);
    for (int a = 2; a <= top; a++) {
        if (hs_is_handle(L, a)) {
            lua_getiuservalue(L, a, 1);
            return luaL_error(L, "string.format: argument %d is <%s>, an opaque handle with no text; pass it only to a binding that takes it",
                              a - 1, lua_tostring(L, -1));
        }
    }
    int arg = 1;
    const char *p = fmt;
    // What the result may hold: the format's own bytes, and per conversion at most
    // lstrlib's largest item (a '%99.99f' of 1e308: about 430 bytes) or a string
    // argument quoted (4 bytes a byte, for '%q').
    double total = (double)flen;
    while (p < end) {
        if (*p != '%') { p++; continue; }
        if (*++p == '%') { p++; continue; }
        if (++arg > top) return luaL_argerror(L, arg, "no value");
        // lstrlib's getformat: flags, width and precision, then one character.
        size_t len = strspn(p, "-+ #0" "123456789.") + 1;
        if (len >= 32 - 10) return luaL_error(L, "invalid format (too long)");
        char form[32];
        form[0] = '%';
        memcpy(form + 1, p, len);
        form[len + 1] = '\0';
        p += len;
        total += 430;
        switch (form[len]) {
            case 'c':
                hs_format_check_spec(L, form, "-", 0);
                (void)luaL_checkinteger(L, arg);
                break;
            case 'd': case 'i':
                (void)luaL_checkinteger(L, arg);
                hs_format_check_spec(L, form, "-+0 ", 1);
                break;
            case 'u':
                (void)luaL_checkinteger(L, arg);
                hs_format_check_spec(L, form, "-0", 1);
                break;
            case 'o': case 'x': case 'X':
                (void)luaL_checkinteger(L, arg);
                hs_format_check_spec(L, form, "-#0", 1);
                break;
            case 'a': case 'A':
                hs_format_check_spec(L, form, "-+ #0", 1);
                (void)luaL_checknumber(L, arg);
                break;
            case 'f': case 'e': case 'E': case 'g': case 'G':
                (void)luaL_checknumber(L, arg);
                hs_format_check_spec(L, form, "-+ #0", 1);
                break;
            case 'p':
                return luaL_error(L, "string.format: '%%p' is not allowed in recipes (it reveals memory addresses)");
            case 'q': {
                if (form[2] != '\0') return luaL_error(L, "specifier '%%q' cannot have modifiers");
                int t = lua_type(L, arg);
                if (t != LUA_TSTRING && t != LUA_TNUMBER && t != LUA_TNIL && t != LUA_TBOOLEAN)
                    return luaL_argerror(L, arg, "value has no literal form");
                break;
            }
            case 's': {
                int t = lua_type(L, arg);
                if (t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TUSERDATA || t == LUA_TTHREAD || t == LUA_TLIGHTUSERDATA) {
                    hs_safe_tolstring(L, arg, NULL);
                    lua_replace(L, arg);
                }
                if (form[2] != '\0') {
                    size_t l;
                    const char *text = luaL_tolstring(L, arg, &l);
                    luaL_argcheck(L, l == strlen(text), arg, "string contains zeros");
                    lua_pop(L, 1);
                    hs_format_check_spec(L, form, "-", 1);
                }
                break;
            }
            default:
                return luaL_error(L, "invalid conversion '%s' to 'format'", form);
        }
        if (lua_type(L, arg) == LUA_TSTRING) total += 4.0 * (double)lua_rawlen(L, arg);
    }
    if (ctx->build_cap != 0 && total > (double)ctx->build_cap)
        return hs_build_cap_error(L, "string.format", total, ctx->build_cap);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, top, 1);
    return 1;
}

// table.concat with a cap on the size of the result (raw sizes; the original does
// the real work and raises its own errors for bad values).
static inline int hs_lua_table_concat(lua_State *L) {
    hs_ctx *ctx = hs_getctx(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t lsep;
    luaL_optlstring(L, 2, "", &lsep);
    lua_Integer i = luaL_optinteger(L, 3, 1);
    lua_Integer j = lua_isnoneornil(L, 4) ? (lua_Integer)lua_rawlen(L, 1) : luaL_checkinteger(L, 4);
    if (ctx->build_cap != 0 && i <= j) {
        double total = 0;
        for (lua_Integer k = i; k <= j; k++) {
            int t = lua_rawgeti(L, 1, k);
            total += (t == LUA_TSTRING ? (double)lua_rawlen(L, -1) : 24.0) + (double)lsep;
            lua_pop(L, 1);
            if (total > (double)ctx->build_cap)
                return hs_build_cap_error(L, "table.concat", total, ctx->build_cap);
            if (k == LUA_MAXINTEGER) break;
        }
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

// collectgarbage restricted to "count" (and no argument, which Lua treats as "collect"
// and is refused too): recipes cannot stop, tune or force the collector.
static inline int hs_lua_collectgarbage(lua_State *L) {
    const char *opt = luaL_optstring(L, 1, "collect");
    if (strcmp(opt, "count") != 0)
        return luaL_error(L, "collectgarbage('%s') is not allowed in recipes; only collectgarbage('count') is", opt);
    lua_pushnumber(L, (lua_Number)lua_gc(L, LUA_GCCOUNT, 0) + (lua_Number)lua_gc(L, LUA_GCCOUNTB, 0) / 1024.0);
    return 1;
}

// MARK: - Coroutines: keep ctx->running current so interrupts reach the right thread

// Calls upvalue 1 with this call's arguments while ctx->running is `co`, then
// restores the running thread (re-raising any error after that).
static inline int hs_call_as_running(lua_State *L, lua_State *co) {
    hs_ctx *ctx = hs_getctx(L);
    lua_State *prev = ctx->running;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    if (co != NULL) ctx->running = co;
    int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    ctx->running = prev;
    if (ctx->limit_hit) hs_arm(ctx);
    if (status != LUA_OK) return lua_error(L);
    return lua_gettop(L);
}

// coroutine.resume(co, …): the original (upvalue 1), with ctx->running set to co meanwhile.
static inline int hs_co_resume(lua_State *L) {
    return hs_call_as_running(L, lua_tothread(L, 1));
}

// coroutine.close(co): the original (upvalue 1), with ctx->running set to co so a
// deadline reaches the __close handlers it runs. After a limit it closes nothing: a
// coroutine stopped by the hook keeps Lua's "no hooks" flag set, so its __close
// handlers would run unstoppable; the stop is raised again instead.
static inline int hs_co_close(lua_State *L) {
    if (hs_getctx(L)->limit_hit) return hs_raise_stop(L);
    return hs_call_as_running(L, lua_tothread(L, 1));
}

// The function coroutine.wrap returns (upvalue 2 its coroutine): Lua 5.4.4's auxwrap,
// with ctx->running set to the coroutine while it runs, and one change: after a limit
// the dead coroutine is not closed (see hs_co_close) and the stop is raised again.
static inline int hs_co_wrapped(lua_State *L) {
    hs_ctx *ctx = hs_getctx(L);
    lua_State *co = lua_tothread(L, lua_upvalueindex(2));
    if (ctx->limit_hit) return hs_raise_stop(L);
    int narg = lua_gettop(L);
    if (!lua_checkstack(co, narg)) return luaL_error(L, "too many arguments to resume");
    lua_xmove(L, co, narg);
    lua_State *prev = ctx->running;
    ctx->running = co;
    int nres = 0;
    int status = lua_resume(co, L, narg, &nres);
    ctx->running = prev;
    if (ctx->limit_hit) {
        hs_arm(ctx);
        return hs_raise_stop(L);
    }
    if (status == LUA_OK || status == LUA_YIELD) {
        if (!lua_checkstack(L, nres + 1)) {
            lua_pop(co, nres);
            return luaL_error(L, "too many results to resume");
        }
        lua_xmove(co, L, nres);
        return nres;
    }
    int stat = lua_status(co);
    if (stat != LUA_OK && stat != LUA_YIELD) {   // an error in the coroutine: close its tbc variables
        ctx->running = co;
        stat = lua_resetthread(co);
        ctx->running = prev;
        if (ctx->limit_hit) {
            hs_arm(ctx);
            return hs_raise_stop(L);
        }
    }
    lua_xmove(co, L, 1);   // the error object
    if (stat != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

// coroutine.wrap(f): the original makes the coroutine; hs_co_wrapped drives it.
static inline int hs_co_wrap(lua_State *L) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);                 // the original wrapper (a C closure over the coroutine)
    lua_getupvalue(L, -1, 1);          // its coroutine
    lua_pushcclosure(L, hs_co_wrapped, 2);
    return 1;
}

// MARK: - Opening the sandbox

// Wraps field `name` of the table at the top with `fn`, the original as its upvalue.
// stack: …, table -> …, table
static inline void hs_wrap_field(lua_State *L, const char *name, lua_CFunction fn) {
    lua_getfield(L, -1, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
}

static inline void hs_remove_field(lua_State *L, const char *table, const char *field) {
    lua_getglobal(L, table);
    if (lua_istable(L, -1)) {
        lua_pushnil(L);
        lua_setfield(L, -2, field);
    }
    lua_pop(L, 1);
}

// Opens the allow-listed libraries and applies the C-level rules. Protected (pcall).
static inline int hs_open_sandbox_protected(lua_State *L) {
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base}, {LUA_STRLIBNAME, luaopen_string},
        {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
        {LUA_UTF8LIBNAME, luaopen_utf8}, {LUA_COLIBNAME, luaopen_coroutine},
        {LUA_OSLIBNAME, luaopen_os}, {NULL, NULL}};
    for (const luaL_Reg *lib = libs; lib->func; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);
        lua_pop(L, 1);
    }
    // os: keep time, clock, date only.
    lua_getglobal(L, "os");
    lua_createtable(L, 0, 3);
    static const char *const os_keep[] = {"time", "clock", "date", NULL};
    for (const char *const *k = os_keep; *k; k++) {
        lua_getfield(L, -2, *k);
        lua_setfield(L, -2, *k);
    }
    lua_setglobal(L, "os");
    lua_pop(L, 1);
    // Remove what escapes the sandbox.
    static const char *const base_remove[] = {"dofile", "loadfile", "require", NULL};
    for (const char *const *k = base_remove; *k; k++) {
        lua_pushnil(L);
        lua_setglobal(L, *k);
    }
    hs_remove_field(L, "string", "dump");
    // Replacements.
    lua_pushcfunction(L, hs_lua_tostring);
    lua_setglobal(L, "tostring");
    lua_pushcfunction(L, hs_lua_collectgarbage);
    lua_setglobal(L, "collectgarbage");
    lua_getglobal(L, "string");
    hs_wrap_field(L, "rep", hs_lua_string_rep);
    hs_wrap_field(L, "format", hs_lua_string_format);
    lua_pop(L, 1);
    lua_getglobal(L, "table");
    hs_wrap_field(L, "concat", hs_lua_table_concat);
    lua_pop(L, 1);
    lua_getglobal(L, "coroutine");
    hs_wrap_field(L, "resume", hs_co_resume);
    hs_wrap_field(L, "wrap", hs_co_wrap);
    hs_wrap_field(L, "close", hs_co_close);
    lua_pop(L, 1);
    // The string metatable is hidden: getmetatable("") returns a string.
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_pushliteral(L, "string");
        lua_setfield(L, -2, "__metatable");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 0;
}

// MARK: - Protected entry points for Swift

// Pushes registry[ref] (LUA_REGISTRYINDEX is a macro Swift cannot import). No raise.
static inline int hs_push_ref(lua_State *L, int ref) {
    return lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
}

// Message handler: adds a traceback to string errors.
static inline int hs_msgh(lua_State *L) {
    hs_ctx *ctx = hs_getctx(L);
    if (ctx->limit_hit) return 1;   // no traceback work once stopped
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {              // tables (structured errors) pass through unchanged;
        if (lua_type(L, 1) == LUA_TTABLE && ctx->on_table_error != NULL)
            ctx->on_table_error(L, ctx->host);   // the host notes where it was raised
        return 1;
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

// Creates a state whose allocator and extra space point at ctx. NULL on failure.
static inline lua_State *hs_newstate(hs_ctx *ctx) {
    lua_State *L = lua_newstate(hs_alloc, ctx);
    if (L == NULL) return NULL;
    *(hs_ctx **)lua_getextraspace(L) = ctx;
    return L;
}

// Opens the sandbox. Returns a Lua status; on error the message is on the stack.
static inline int hs_open_sandbox(lua_State *L) {
    if (!lua_checkstack(L, 4)) return LUA_ERRMEM;
    lua_pushcfunction(L, hs_open_sandbox_protected);
    return lua_pcall(L, 0, 0, 0);
}

// A data-only state (manifests, configuration files) opens the base and string libraries
// alone: its chunks see no globals, and only the prelude's own setmetatable, error,
// tostring and load are used. The string library is there for its metatable's
// arithmetic ("10" + 1 is 11, as in Lua); hs_strip_string_methods then removes the
// methods, so strings reach no C function (nothing a count hook cannot interrupt).
static inline int hs_open_data_sandbox_protected(lua_State *L) {
    luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
    lua_pop(L, 1);
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 0);
    lua_pop(L, 1);
    static const char *const base_remove[] = {"dofile", "loadfile", "require", NULL};
    for (const char *const *k = base_remove; *k; k++) {
        lua_pushnil(L);
        lua_setglobal(L, *k);
    }
    lua_pushcfunction(L, hs_lua_tostring);
    lua_setglobal(L, "tostring");
    return 0;
}

static inline int hs_open_data_sandbox(lua_State *L) {
    if (!lua_checkstack(L, 4)) return LUA_ERRMEM;
    lua_pushcfunction(L, hs_open_data_sandbox_protected);
    return lua_pcall(L, 0, 0, 0);
}

// For data-only chunks (manifests, configuration): removes the string methods, so a
// data chunk reaches no C function at all (nothing a count hook cannot interrupt).
static inline int hs_strip_string_methods_protected(lua_State *L) {
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_pushnil(L);
        lua_setfield(L, -2, "__index");
    }
    return 0;
}

static inline int hs_strip_string_methods(lua_State *L) {
    if (!lua_checkstack(L, 4)) return LUA_ERRMEM;
    lua_pushcfunction(L, hs_strip_string_methods_protected);
    return lua_pcall(L, 0, 0, 0);
}

// Makes L the running thread and, when an instruction cap is set, installs the
// counting hook (coroutines created later inherit it).
static inline void hs_install_hook(lua_State *L) {
    hs_ctx *ctx = hs_getctx(L);
    ctx->running = L;
    if (ctx->hook_interval <= 0) ctx->hook_interval = 1000;
    if (ctx->instruction_cap != 0) lua_sethook(L, hs_hook, LUA_MASKCOUNT, ctx->hook_interval);
}

// Loads a text chunk (binary chunks are refused by mode "t"). Protected by lua_load.
// stack: … -> …, function | error message
static inline int hs_load_text(lua_State *L, const char *buf, size_t len, const char *chunkname) {
    if (!lua_checkstack(L, 2)) return LUA_ERRMEM;
    return luaL_loadbufferx(L, buf, len, chunkname, "t");
}

typedef struct hs_call_params {
    const hs_op *ops;
    int nops;
    int nargs;
    int stack_need;
} hs_call_params;

static inline int hs_call_protected(lua_State *L) {
    hs_call_params *p = (hs_call_params *)lua_touserdata(L, -1);
    lua_pop(L, 1);
    // stack: function
    luaL_checkstack(L, p->stack_need + 2, "building arguments");
    hs_run_ops(L, p->ops, p->nops);
    lua_call(L, p->nargs, LUA_MULTRET);
    return lua_gettop(L);
}

// Calls the function at the top of the stack with arguments built from ops, under
// lua_pcall with a traceback handler. Returns a Lua status.
// stack: …, function -> …, results… (status OK) | …, error value (otherwise)
static inline int hs_pcall_ops(lua_State *L, const hs_op *ops, int nops, int nargs, int stack_need) {
    if (!lua_checkstack(L, 6)) return LUA_ERRMEM;
    hs_getctx(L)->call_depth = 0;       // a top-level call: no binding is in progress
    int base = lua_gettop(L);           // the function's slot
    lua_pushcfunction(L, hs_msgh);
    lua_insert(L, base);                // …, msgh, function
    lua_pushcfunction(L, hs_call_protected);
    lua_insert(L, base + 1);            // …, msgh, thunk, function
    hs_call_params params = {ops, nops, nargs, stack_need};
    lua_pushlightuserdata(L, &params);  // …, msgh, thunk, function, params
    int status = lua_pcall(L, 2, LUA_MULTRET, base);
    lua_remove(L, base);                // drop msgh
    return status;
}

static inline int hs_ref_protected(lua_State *L) {
    int *out = (int *)lua_touserdata(L, 2);
    lua_settop(L, 1);
    *out = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

// Pops the value at the top into the registry; *ref receives its reference.
// Returns a Lua status. stack: …, value -> …
static inline int hs_ref_top(lua_State *L, int *ref) {
    if (!lua_checkstack(L, 3)) return LUA_ERRMEM;
    lua_pushcfunction(L, hs_ref_protected);
    lua_insert(L, -2);
    lua_pushlightuserdata(L, ref);
    return lua_pcall(L, 2, 0, 0);
}

// Frees a state. Finalizers run here with hooks off (the host's watchdog covers
// them) and may call no binding: the recipe has ended.
static inline void hs_close(lua_State *L) {
    hs_getctx(L)->closed = 1;
    lua_close(L);
}

// MARK: - Precompiled preludes

// The preludes' bytecode is in the CLuaChunks target (see ScriptHost's PreludeChunk).

// The Lua release the binary is built with (50404 for 5.4.4): bytecode is only
// trusted from the same release.
static inline int hs_lua_release_num(void) { return LUA_VERSION_RELEASE_NUM; }

// Loads a chunk of ours from its bytecode (mode "b"; recipes are only ever loaded as
// text, mode "t", by hs_load_text and the prelude's load).
static inline int hs_load_binary(lua_State *L, const unsigned char *buf, size_t len, const char *chunkname) {
    if (!lua_checkstack(L, 2)) return LUA_ERRMEM;
    return luaL_loadbufferx(L, (const char *)buf, len, chunkname, "b");
}

typedef struct hs_dump_buffer {
    unsigned char *bytes;
    size_t len, cap;
    int failed;
} hs_dump_buffer;

static inline int hs_dump_writer(lua_State *L, const void *p, size_t sz, void *ud) {
    (void)L;
    hs_dump_buffer *b = (hs_dump_buffer *)ud;
    if (b->len + sz > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 4096);
        while (cap < b->len + sz) cap *= 2;
        unsigned char *bigger = (unsigned char *)realloc(b->bytes, cap);
        if (!bigger) { b->failed = 1; return 1; }
        b->bytes = bigger;
        b->cap = cap;
    }
    memcpy(b->bytes + b->len, p, sz);
    b->len += sz;
    return 0;
}

static inline int hs_dump_protected(lua_State *L) {
    hs_dump_buffer *b = (hs_dump_buffer *)lua_touserdata(L, 2);
    lua_settop(L, 1);
    lua_dump(L, hs_dump_writer, b, 0);
    return 0;
}

// Compiles Lua text to bytecode (with debug information) in a fresh state of its own:
// how scripts/generate-prelude-bytecode makes Sources/CLuaChunks/prelude_bytecode.c. On success (LUA_OK) *out is a
// malloc'd buffer the caller frees; otherwise *out is NULL.
static inline int hs_compile_chunk(const char *src, size_t len, const char *chunkname,
                                   unsigned char **out, size_t *outlen) {
    *out = NULL;
    *outlen = 0;
    lua_State *L = luaL_newstate();
    if (!L) return LUA_ERRMEM;
    hs_dump_buffer b = {NULL, 0, 0, 0};
    int status = luaL_loadbufferx(L, src, len, chunkname, "t");
    if (status == LUA_OK) {
        lua_pushcfunction(L, hs_dump_protected);
        lua_insert(L, -2);
        lua_pushlightuserdata(L, &b);
        status = lua_pcall(L, 2, 0, 0);
    }
    lua_close(L);
    if (status == LUA_OK && !b.failed) {
        *out = b.bytes;
        *outlen = b.len;
        return LUA_OK;
    }
    free(b.bytes);
    return status == LUA_OK ? LUA_ERRMEM : status;
}

#endif
