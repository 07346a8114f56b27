// A child process that answers in lines on stdout (the C harnesses of the benchmarks): lines
// are read one at a time, in order; once it has exited, reading gives `exit CODE STDERR`.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export class LineChild {
  protected readonly child: ChildProcessWithoutNullStreams;
  private buffer = '';
  private readonly waiting: ((line: string) => void)[] = [];
  private readonly lines: string[] = [];
  private stderr = '';

  constructor(bin: string, args: readonly string[]) {
    this.child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d: string) => {
      this.buffer += d;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        const w = this.waiting.shift();
        if (w) w(line);
        else this.lines.push(line);
      }
    });
    this.child.stderr.on('data', (d: Buffer) => void (this.stderr += d.toString()));
    this.child.on('exit', (code) => {
      for (const w of this.waiting.splice(0)) w(`exit ${code} ${this.stderr.slice(0, 2000)}`);
    });
  }

  /** The next line the child printed. */
  line(): Promise<string> {
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(l);
    if (this.child.exitCode !== null) return Promise.resolve(`exit ${this.child.exitCode} ${this.stderr.slice(0, 2000)}`);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  send(text: string): void {
    this.child.stdin.write(text);
  }
}
