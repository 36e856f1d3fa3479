// The module-level functions' one shared instance (index.js: the gate and the converting gate;
// worker.js: the Worker gate): made on first use, and forgotten when making it failed, when the
// options change, or when the instance itself broke (a trap, a dead Worker), so that the next call
// makes another.

export class SharedInstance {
  #make;
  #made;

  /** `make` returns a promise of the instance; it is called on first use and after each forget. */
  constructor(make) {
    this.#make = make;
  }

  /** The shared promise, made now if there is none. */
  get() {
    if (!this.#made) {
      const made = this.#make();
      this.#made = made;
      made.catch(() => {
        if (this.#made === made) this.#made = undefined;
      });
    }
    return this.#made;
  }

  /** Forgets the shared promise and returns it (undefined when there was none). */
  forget() {
    const made = this.#made;
    this.#made = undefined;
    return made;
  }

  /** Forgets the shared instance if it is `instance`. */
  async forgetIf(instance) {
    const made = this.#made;
    if (made && (await made.catch(() => null)) === instance && this.#made === made) this.#made = undefined;
  }
}
