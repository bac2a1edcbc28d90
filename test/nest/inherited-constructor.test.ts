/**
 * Issue 32 item 19: a @Tool class that inherits its constructor from a base class without
 * `@Injectable()` booted (the boot check read `cls.length`, 0 for an inherited constructor),
 * then Nest built it with no arguments and every call failed with "Cannot read properties of
 * undefined". Nest reads `design:paramtypes` through the prototype chain, so the tool gets its
 * dependencies only when the base class carries them (its own decorator emitted them) or the
 * tool declares its own constructor. Anything else must be refused at boot.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import ts from 'typescript';
import { Tool, Toolkit } from 'toolnexus-ts';
import { ToolnexusModule, ToolnexusModuleError } from 'toolnexus-ts/nest';
import { LedgerService } from '../fixtures/nest/ledger';

/** A base class with constructor parameters and no decorator: TypeScript emits no metadata for it. */
abstract class PlainMoneyTool {
  constructor(protected readonly ledger: LedgerService) {}
  run(): string {
    return this.ledger.move('a', 'b', 1);
  }
}

@Injectable()
@Tool({ name: 'plain_move', description: 'Moves money' })
class PlainMoveTool extends PlainMoneyTool {}

/** Two levels down: the middle class is decorated but declares no constructor, so it has no metadata either. */
@Injectable()
abstract class MiddleMoneyTool extends PlainMoneyTool {}

@Injectable()
@Tool({ name: 'deep_move', description: 'Moves money' })
class DeepMoveTool extends MiddleMoneyTool {}

/** The same base with `@Injectable()`: its `design:paramtypes` is inherited, and Nest injects the ledger. */
@Injectable()
abstract class InjectableMoneyTool {
  constructor(protected readonly ledger: LedgerService) {}
  run(): string {
    return this.ledger.move('a', 'b', 2);
  }
}

@Injectable()
@Tool({ name: 'injectable_move', description: 'Moves money' })
class InjectableMoveTool extends InjectableMoneyTool {}

/** The tool declares its own constructor: its own metadata names the ledger. */
@Injectable()
@Tool({ name: 'own_move', description: 'Moves money' })
class OwnConstructorMoveTool extends PlainMoneyTool {
  constructor(ledger: LedgerService) {
    super(ledger);
  }
}

/** A constructor of its own with no parameters that builds what the base needs: nothing to inject. */
@Injectable()
@Tool({ name: 'self_built_move', description: 'Moves money' })
class SelfBuiltMoveTool extends PlainMoneyTool {
  constructor() {
    super(new LedgerService());
  }
}

async function boot(tool: new (...args: never[]) => object) {
  const app = await Test.createTestingModule({ imports: [ToolnexusModule.forRoot()], providers: [LedgerService, tool] }).compile();
  return app.init();
}

describe('a @Tool provider whose constructor is inherited', () => {
  it('is refused at boot when the base class has no @Injectable(), naming the tool and the fix', async () => {
    const booting = boot(PlainMoveTool);
    await expect(booting).rejects.toThrow(ToolnexusModuleError);
    await expect(booting).rejects.toMatchObject({ code: 'TOOLNEXUS_NEST_MODULE' });
    await expect(booting).rejects.toThrow(
      /PlainMoveTool.*inherits.*PlainMoneyTool.*@Injectable\(\) on PlainMoneyTool.*declare a constructor in PlainMoveTool/,
    );
  });

  it('is refused at boot two levels down', async () => {
    await expect(boot(DeepMoveTool)).rejects.toThrow(/DeepMoveTool.*inherits.*PlainMoneyTool/);
  });

  it('is refused by an app built with NestFactory', async () => {
    @Module({ imports: [ToolnexusModule.forRoot()], providers: [LedgerService, PlainMoveTool] })
    class AppModule {}
    // Not listening: the refusal comes from init, before any port would be opened.
    const app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    try {
      await expect(app.init()).rejects.toThrow(/PlainMoveTool.*inherits.*PlainMoneyTool/);
    } finally {
      await app.close();
    }
  });

  it('boots and runs when the base class has @Injectable()', async () => {
    const app = await boot(InjectableMoveTool);
    expect(await app.get(Toolkit).execute('injectable_move')).toEqual({ output: 'moved 2 from a to b', isError: false });
    await app.close();
  });

  it('boots and runs when the tool declares its own constructor', async () => {
    const app = await boot(OwnConstructorMoveTool);
    expect(await app.get(Toolkit).execute('own_move')).toEqual({ output: 'moved 1 from a to b', isError: false });
    await app.close();
  });

  it('boots and runs when its own constructor takes nothing', async () => {
    const app = await boot(SelfBuiltMoveTool);
    expect(await app.get(Toolkit).execute('self_built_move')).toEqual({ output: 'moved 1 from a to b', isError: false });
    await app.close();
  });
});

/**
 * Compiled without decorator metadata (esbuild, swc, isolated transpiling), a declared
 * constructor with no parameters looks like an inherited one by its length and metadata; it
 * must still boot, and an inherited one must still be refused.
 */
const SOURCE = `
import { Injectable } from '@nestjs/common';
import { Tool } from 'toolnexus-ts';
import { LedgerService } from '../fixtures/nest/ledger';

abstract class MoneyTool {
  constructor(protected readonly ledger: LedgerService) {}
  run() {
    return this.ledger.move('a', 'b', 3);
  }
}

@Injectable()
@Tool({ name: 'inherited_move', description: 'Moves money' })
export class InheritedMoveTool extends MoneyTool {
  describe() {
    return this.constructor.name;
  }
}

@Injectable()
@Tool({ name: 'self_built_move', description: 'Moves money' })
export class SelfBuiltMoveTool extends MoneyTool {
  constructor() {
    super(new LedgerService());
  }
}
`;

type Compiled = Record<'InheritedMoveTool' | 'SelfBuiltMoveTool', new (...args: never[]) => object>;

function compiledWithoutMetadata(): Compiled {
  const { outputText } = ts.transpileModule(SOURCE, {
    compilerOptions: {
      experimentalDecorators: true,
      emitDecoratorMetadata: false,
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
    },
  });
  const module = { exports: {} as Compiled };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the compiled fixture, run with this file's require
  const load = new Function('require', 'exports', 'module', outputText) as (
    r: NodeJS.Require,
    e: Compiled,
    m: { exports: Compiled },
  ) => void;
  load(require, module.exports, module);
  return module.exports;
}

describe('an inherited constructor compiled without emitDecoratorMetadata', () => {
  it('is refused at boot', async () => {
    const { InheritedMoveTool } = compiledWithoutMetadata();
    await expect(boot(InheritedMoveTool)).rejects.toThrow(
      /InheritedMoveTool inherits its constructor from MoneyTool.*"emitDecoratorMetadata": true/,
    );
  });

  it('boots when the tool declares a constructor that takes nothing', async () => {
    const { SelfBuiltMoveTool } = compiledWithoutMetadata();
    const app = await boot(SelfBuiltMoveTool);
    expect(await app.get(Toolkit).execute('self_built_move')).toEqual({ output: 'moved 3 from a to b', isError: false });
    await app.close();
  });
});
