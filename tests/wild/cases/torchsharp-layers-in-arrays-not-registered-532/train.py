private class Model1 : Module
{
    private Conv2d[] ConvolutionLayers { get; } =   new[]
                                                    {
                                                        Conv2d(1, 32, 3),
                                                        Conv2d(32, 64, 3)
                                                    };

    private Linear[] FullyConnectedLayers { get; } =    new[]
                                                        {
                                                            Linear(9216, 128),
                                                            Linear(128, 10)
                                                        };
