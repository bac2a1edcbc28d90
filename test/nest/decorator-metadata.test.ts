/**
 * Issue 27 item 7: a Nest app compiled without `emitDecoratorMetadata` used to boot, build
 * its tools with `undefined` dependencies and fail at the first call. The tool class here is
 * compiled as such an app compiles it (ts.transpileModule, emitDecoratorMetadata off) and
 * must be refused at module init with an error naming the tsconfig option.
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import ts from 'typescript';
import { Toolkit } from 'toolnexus-ts';
import { ToolnexusModule, ToolnexusModuleError } from 'toolnexus-ts/nest';
import { LedgerService } from '../fixtures/nest/ledger';

const SOURCE = `
import { Inject, Injectable } from '@nestjs/common';
import { Tool } from 'toolnexus-ts';
import { LedgerService } from '../fixtures/nest/ledger';

@Injectable()
@Tool({ name: 'move', description: 'Moves money' })
export class MoveTool {
  constructor(private readonly ledger: LedgerService) {}
  run() {
    return this.ledger.move('a', 'b', 1);
  }
}

@Injectable()
@Tool({ name: 'move_injected', description: 'Moves money, its dependency named' })
export class InjectedMoveTool {
  constructor(@Inject(LedgerService) private readonly ledger: LedgerService) {}
  run() {
    return this.ledger.move('a', 'b', 2);
  }
}
`;

type Tools = { MoveTool: new (...args: never[]) => object; InjectedMoveTool: new (...args: never[]) => object };

/** The fixture compiled one file at a time, as esbuild, swc or ts-jest's isolatedModules do, and loaded. */
function compiled(emitDecoratorMetadata: boolean): Tools {
  const { outputText } = ts.transpileModule(SOURCE, {
    compilerOptions: {
      experimentalDecorators: true,
      emitDecoratorMetadata,
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
    },
  });
  const module = { exports: {} as Tools };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the compiled fixture, run with this file's require
  const load = new Function('require', 'exports', 'module', outputText) as (r: NodeJS.Require, e: Tools, m: { exports: Tools }) => void;
  load(require, module.exports, module);
  return module.exports;
}

async function boot(tool: new (...args: never[]) => object) {
  const app = await Test.createTestingModule({ imports: [ToolnexusModule.forRoot()], providers: [LedgerService, tool] }).compile();
  return app.init();
}

describe('a @Tool provider compiled without emitDecoratorMetadata', () => {
  it('is refused at module init, naming the tsconfig option', async () => {
    const { MoveTool } = compiled(false);
    const booting = boot(MoveTool);
    await expect(booting).rejects.toThrow(ToolnexusModuleError);
    await expect(booting).rejects.toThrow(/MoveTool has no design:paramtypes metadata.*"emitDecoratorMetadata": true/);
  });

  it('boots when each dependency is named with @Inject', async () => {
    const { InjectedMoveTool } = compiled(false);
    const app = await boot(InjectedMoveTool);
    expect(await app.get(Toolkit).execute('move_injected')).toEqual({ output: 'moved 2 from a to b', isError: false });
    await app.close();
  });

  it('boots and runs when compiled with emitDecoratorMetadata', async () => {
    const { MoveTool } = compiled(true);
    const app = await boot(MoveTool);
    expect(await app.get(Toolkit).execute('move')).toEqual({ output: 'moved 1 from a to b', isError: false });
    await app.close();
  });
});
