// The benchmark's two tools as toolnexus-ts classes, shared by the toolnexus-ts rows:
// class-validator DTOs whose schema and validation come from the same decorators.
import { IsNumber, IsString } from 'class-validator';
import { Describe, Tool } from '../../../dist';
import { ADD, WEATHER, add, getWeather } from '../scenario.cjs';

class WeatherArgs {
  @IsString() @Describe(WEATHER.city) city!: string;
}

@Tool({ name: WEATHER.name, description: WEATHER.description, args: WeatherArgs })
export class GetWeatherTool {
  run(args: WeatherArgs) {
    return getWeather(args);
  }
}

class AddArgs {
  @IsNumber() @Describe(ADD.a) a!: number;
  @IsNumber() @Describe(ADD.b) b!: number;
}

@Tool({ name: ADD.name, description: ADD.description, args: AddArgs })
export class AddTool {
  run(args: AddArgs) {
    return add(args);
  }
}
