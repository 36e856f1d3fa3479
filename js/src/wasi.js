// The WASI imports of the preflight component, given nothing.
//
// The preflight world exports the gate and imports only what Rust's std links in: stdio,
// environment, exit, a random seed for hash maps, and the wasi:io resources behind stdio. This
// module answers each of them with nothing: no environment variables, no arguments, no working
// directory, stdin closed, no terminal, exit raises an error (it never ends the host process).
// There is no filesystem, clock, socket or HTTP import to give, because the component has none.
//
// It is the same plain JavaScript in browsers and in Node (>= 20): it uses only TextDecoder and
// globalThis.crypto. Node's @bytecodealliance/preview2-shim would hand the guest process.env,
// process.argv, the working directory, the real stdin and process.exit; its browser build is close
// to this one but is not what Node resolves, so the two platforms would differ.

/** Raised when the guest calls wasi:cli/exit (the gate never does; a host stays alive). */
export class GuestExit extends Error {
  constructor(code) {
    super(`the gate component exited with status ${code}`);
    this.name = 'GuestExit';
    this.code = code;
  }
}

/**
 * Builds a fresh import object for one instance.
 *
 * @param {{stdout?: (line: string) => void, stderr?: (line: string) => void}} [sinks]
 *   Where the guest's stdout and stderr lines go (a panic message, for example). Every stderr
 *   line is also kept in `lastStderr` so an error raised by a trap can quote it.
 */
export function nothingWasi(sinks = {}) {
  const recentStderr = [];

  class IoError {
    constructor(message) {
      this.message = message;
    }
    toDebugString() {
      return this.message;
    }
  }

  class Pollable {
    // Nothing is ever pending: every stream is either ready or closed.
    ready() {
      return true;
    }
    block() {}
  }

  class InputStream {
    read() {
      throw { tag: 'closed' };
    }
    blockingRead() {
      throw { tag: 'closed' };
    }
    skip() {
      throw { tag: 'closed' };
    }
    blockingSkip() {
      throw { tag: 'closed' };
    }
    subscribe() {
      return new Pollable();
    }
  }

  class OutputStream {
    #decoder = new TextDecoder();
    #pending = '';
    #emit;
    constructor(emit) {
      this.#emit = emit;
    }
    checkWrite() {
      return 1n << 20n;
    }
    write(contents) {
      this.#pending += this.#decoder.decode(contents, { stream: true });
      const lines = this.#pending.split('\n');
      this.#pending = lines.pop();
      for (const line of lines) this.#emit(line);
    }
    blockingWriteAndFlush(contents) {
      this.write(contents);
      this.flush();
    }
    flush() {
      this.#pending += this.#decoder.decode();
      if (this.#pending) this.#emit(this.#pending);
      this.#pending = '';
    }
    blockingFlush() {
      this.flush();
    }
    subscribe() {
      return new Pollable();
    }
  }

  class TerminalInput {}
  class TerminalOutput {}

  const stdoutLine = sinks.stdout ?? ((line) => console.log(`[mediagate] ${line}`));
  const stderrLine = sinks.stderr ?? ((line) => console.error(`[mediagate] ${line}`));
  const stdinStream = new InputStream();
  const stdoutStream = new OutputStream(stdoutLine);
  const stderrStream = new OutputStream((line) => {
    recentStderr.push(line);
    if (recentStderr.length > 20) recentStderr.shift();
    stderrLine(line);
  });

  const seed = () => {
    const words = new BigUint64Array(2);
    globalThis.crypto.getRandomValues(words);
    return [words[0], words[1]];
  };

  const interfaces = {
    'wasi:cli/environment': {
      getEnvironment: () => [],
      getArguments: () => [],
      initialCwd: () => undefined,
    },
    'wasi:cli/exit': {
      exit(status) {
        throw new GuestExit(status?.tag === 'err' ? 1 : 0);
      },
      exitWithCode(code) {
        throw new GuestExit(code);
      },
    },
    'wasi:cli/stdin': { getStdin: () => stdinStream },
    'wasi:cli/stdout': { getStdout: () => stdoutStream },
    'wasi:cli/stderr': { getStderr: () => stderrStream },
    'wasi:cli/terminal-input': { TerminalInput },
    'wasi:cli/terminal-output': { TerminalOutput },
    'wasi:cli/terminal-stdin': { getTerminalStdin: () => undefined },
    'wasi:cli/terminal-stdout': { getTerminalStdout: () => undefined },
    'wasi:cli/terminal-stderr': { getTerminalStderr: () => undefined },
    'wasi:io/error': { Error: IoError },
    'wasi:io/poll': {
      Pollable,
      poll: (list) => Uint32Array.from(list, (_, i) => i),
    },
    'wasi:io/streams': { InputStream, OutputStream },
    'wasi:random/insecure-seed': { insecureSeed: seed },
  };

  // jco looks an interface up by its unversioned name; a lookup by a versioned name
  // (`wasi:io/poll@0.2.6`) is answered too, whatever the patch version the guest was built with.
  const imports = new Proxy(interfaces, {
    get: (target, key) => (typeof key === 'string' ? target[key] ?? target[key.split('@')[0]] : undefined),
  });

  return {
    imports,
    /** The last stderr lines the guest wrote (a panic message names its cause there). */
    lastStderr: () => recentStderr.slice(),
    /** Flushes partial lines (called after a trap so the message is complete). */
    flush: () => {
      stdoutStream.flush();
      stderrStream.flush();
    },
  };
}
